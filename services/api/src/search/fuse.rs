//! Reciprocal-rank fusion: several ranked lists become one. A hit scores
//! `Σ 1 / (K + rank)` over the lists it is in (rank from 1), so being near
//! the top of either list counts, and being in both counts most; the lists'
//! own scores (text rank, cosine) are never compared with each other.
//! Ties go to the better single rank, then to the greater id (ids are
//! UUIDv7: the newer).

use std::collections::HashMap;

use uuid::Uuid;

/// The usual constant (Cormack et al.): damps the head of each list.
pub const K: f64 = 60.0;

/// One fused hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    /// `observation` or `summary`.
    pub source: String,
    pub id: Uuid,
    pub score: f64,
}

/// `lists` hold `(source, id)`, best first; a key repeated within a list counts once (its best rank).
pub fn rrf(lists: &[Vec<(String, Uuid)>]) -> Vec<Fused> {
    // id → (source, score, best rank)
    let mut acc: HashMap<Uuid, (String, f64, usize)> = HashMap::new();
    for list in lists {
        let mut seen = std::collections::HashSet::new();
        for (i, (source, id)) in list.iter().enumerate() {
            if !seen.insert(*id) {
                continue;
            }
            let rank = i + 1;
            let entry = acc
                .entry(*id)
                .or_insert_with(|| (source.clone(), 0.0, usize::MAX));
            entry.1 += 1.0 / (K + rank as f64);
            entry.2 = entry.2.min(rank);
        }
    }
    let mut fused: Vec<(Fused, usize)> = acc
        .into_iter()
        .map(|(id, (source, score, best))| (Fused { source, id, score }, best))
        .collect();
    fused.sort_by(|(a, ra), (b, rb)| b.score.total_cmp(&a.score).then(ra.cmp(rb)).then(b.id.cmp(&a.id)));
    fused.into_iter().map(|(f, _)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u128) -> (String, Uuid) {
        ("observation".into(), Uuid::from_u128(n))
    }

    #[test]
    fn both_lists_beat_one() {
        // 3 is second in both lists; 1 and 4 top one list each.
        let fused = rrf(&[vec![key(1), key(3), key(2)], vec![key(4), key(3)]]);
        let ids: Vec<u128> = fused.iter().map(|f| f.id.as_u128()).collect();
        assert_eq!(ids, [3, 4, 1, 2], "{fused:?}");
        assert!((fused[0].score - 2.0 / 62.0).abs() < 1e-12);
        // 1 and 4 tie on score and best rank: the greater id first.
        assert_eq!(fused[1].score, fused[2].score);
    }

    #[test]
    fn one_list_keeps_its_order_and_repeats_count_once() {
        let fused = rrf(&[vec![key(5), key(9), key(5), key(1)]]);
        let ids: Vec<u128> = fused.iter().map(|f| f.id.as_u128()).collect();
        assert_eq!(ids, [5, 9, 1]);
        assert!((fused[0].score - 1.0 / 61.0).abs() < 1e-12);
        assert!(rrf(&[vec![], vec![]]).is_empty());
    }
}
