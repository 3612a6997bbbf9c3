//! The stored vectors a search has read, kept in memory by memory and
//! model: a memory's vector of a model never changes, and every search of a
//! project compares the same newest memories, so after the first search
//! only the ids are read from Postgres (the vectors were 80 % of a vector
//! search's time: 2,000 × 1.5 KB decoded per search). Bounded by bytes;
//! the least recently used go first. Ids are UUIDs, unique across projects,
//! and only ids a project-scoped statement returned are ever looked up.
//! An edit of a memory's text (`PATCH /v1/memories/{id}`) deletes its
//! stored vector and calls `forget` on every replica (through the live
//! notice `observation.updated`): its vectors of every model leave the
//! cache, and for `FORGET_WINDOW` no vector of it is cached again, so a
//! search that read the old vector before the edit committed cannot put
//! it back.

use std::{
    collections::HashSet,
    sync::{Arc, LazyLock, Mutex},
    time::Duration,
};

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

/// How long an edited memory's vectors are not cached again.
pub const FORGET_WINDOW: Duration = Duration::from_secs(60);

/// Memories edited within `FORGET_WINDOW`.
static FORGOTTEN: LazyLock<Cache<Uuid, ()>> = LazyLock::new(|| {
    Cache::builder()
        .max_capacity(100_000)
        .time_to_live(FORGET_WINDOW)
        .build()
});

/// The models vectors were cached for (one, in practice).
static MODELS: LazyLock<Mutex<HashSet<Arc<str>>>> = LazyLock::new(Mutex::default);

/// Drops a memory's cached vectors (of every model) after an edit.
pub fn forget(id: Uuid) {
    FORGOTTEN.insert(id, ());
    let models: Vec<Arc<str>> = MODELS
        .lock()
        .map(|m| m.iter().cloned().collect())
        .unwrap_or_default();
    for model in models {
        VECTORS.invalidate(&(id, model));
    }
}

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
    if let Ok(mut models) = MODELS.lock()
        && !models.contains(model)
    {
        models.insert(model.clone());
    }
    read.into_iter()
        .map(|(id, v)| {
            let v: Arc<[f32]> = v.into();
            if !FORGOTTEN.contains_key(&id) {
                VECTORS.insert((id, model.clone()), v.clone());
            }
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

    #[test]
    fn a_forgotten_vector_is_not_served_nor_cached_again() {
        let a = Uuid::now_v7();
        let mini: Arc<str> = Arc::from("mini");
        keep(&mini, vec![(a, vec![1.0, 0.0])]);
        assert_eq!(split(&[a], &mini).0.len(), 1);
        forget(a);
        let (found, missing) = split(&[a], &mini);
        assert!(found.is_empty(), "the old vector is gone");
        assert_eq!(missing, [a]);
        // A search that read the old vector before the edit cannot cache it again.
        let kept = keep(&mini, vec![(a, vec![1.0, 0.0])]);
        assert_eq!(kept.len(), 1);
        assert!(split(&[a], &mini).0.is_empty());
    }
}
