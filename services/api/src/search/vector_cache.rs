//! The stored vectors a search has read, kept in memory by memory and
//! model: a memory's vector of a model never changes, and every search of a
//! project compares the same newest memories, so after the first search
//! only the ids are read from Postgres (the vectors were 80 % of a vector
//! search's time: 2,000 × 1.5 KB decoded per search). Bounded by bytes;
//! the least recently used go first. Ids are UUIDs, unique across projects,
//! and only ids a project-scoped statement returned are ever looked up.
//! Memories are never edited in place (a vector is only ever replaced by
//! one of another model, under another key); an edit of a memory's text
//! would have to give the key a version.

use std::sync::{Arc, LazyLock};

use moka::sync::Cache;
use uuid::Uuid;

/// What the cache may hold: ~80,000 vectors of 384 dimensions.
pub const CAPACITY_BYTES: u64 = 128 * 1024 * 1024;

type Key = (Uuid, Arc<str>);
/// A memory's id and its vector.
pub type Vector = (Uuid, Arc<[f32]>);

static VECTORS: LazyLock<Cache<Key, Arc<[f32]>>> = LazyLock::new(|| {
    Cache::builder()
        .max_capacity(CAPACITY_BYTES)
        .weigher(|(_, model): &Key, v: &Arc<[f32]>| {
            u32::try_from(v.len() * 4 + model.len() + 64).unwrap_or(u32::MAX)
        })
        .build()
});

/// The cached vectors of `ids` for `model`, and the ids not cached.
pub fn split(ids: &[Uuid], model: &Arc<str>) -> (Vec<Vector>, Vec<Uuid>) {
    let mut found = Vec::with_capacity(ids.len());
    let mut missing = Vec::new();
    for id in ids {
        match VECTORS.get(&(*id, model.clone())) {
            Some(v) => found.push((*id, v)),
            None => missing.push(*id),
        }
    }
    (found, missing)
}

/// Keeps vectors just read for `model`; gives them back shared.
pub fn keep(model: &Arc<str>, read: Vec<(Uuid, Vec<f32>)>) -> Vec<Vector> {
    read.into_iter()
        .map(|(id, v)| {
            let v: Arc<[f32]> = v.into();
            VECTORS.insert((id, model.clone()), v.clone());
            (id, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_kept_per_model() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let mini: Arc<str> = Arc::from("mini");
        let other: Arc<str> = Arc::from("other");
        let kept = keep(&mini, vec![(a, vec![1.0, 0.0])]);
        assert_eq!(&*kept[0].1, &[1.0, 0.0]);
        let (found, missing) = split(&[a, b], &mini);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].0, &*found[0].1), (a, &[1.0f32, 0.0][..]));
        assert_eq!(missing, [b]);
        // Another model's vector of the same memory is not this one.
        let (found, missing) = split(&[a], &other);
        assert!(found.is_empty());
        assert_eq!(missing, [a]);
    }
}
