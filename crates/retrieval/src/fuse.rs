//! Fusion of the two arms and the final score.
//!
//! Convex combination of normalised scores (Bruch, Gai and Ingber, "An
//! Analysis of Fusion Functions for Hybrid Retrieval", 2023, found it
//! beats reciprocal-rank fusion and is easier to tune): the lexical score
//! over the most the query's terms could score (their idf at saturation,
//! the "theoretical maximum"), the cosine rescaled from `MIN_SIMILARITY..1`
//! to `0..1`, weighted `LEXICAL_WEIGHT` to the rest.
//! A memory found by one arm only has 0 from the other. Unlike RRF the
//! scores keep their gaps: a lone strong lexical match (a rare error code)
//! stays above many weak semantic neighbours.
//!
//! The final score multiplies in the memory's state (stale half,
//! superseded a quarter) and a small recency factor that breaks near-ties
//! towards newer memories and never hides an older match.

use chrono::{DateTime, Utc};

use crate::{scratch::Stamped, semantic::MIN_SIMILARITY};

/// Weight of the lexical arm in hybrid mode (the semantic arm has the rest).
/// Tuned on the tune sets only: the recall benchmark's (with and without
/// 10,000 newer memories a project) and the public set's dev half
/// (bench/public_set.sh --tune). 0.4 had the best MRR summed over the three;
/// 0.3 was one question of 86 better on the public dev half and below on
/// the recall tune set (bench/README.md, "The semantic scale at every size").
pub const LEXICAL_WEIGHT: f32 = 0.4;

/// [`LEXICAL_WEIGHT`], or `CAIRN_RETRIEVAL_LEXICAL_WEIGHT` (0..=1) when set:
/// the knob the tune set is swept with.
pub fn lexical_weight() -> f32 {
    static WEIGHT: std::sync::LazyLock<f32> = std::sync::LazyLock::new(|| {
        crate::knob::f32_env("CAIRN_RETRIEVAL_LEXICAL_WEIGHT", LEXICAL_WEIGHT, 0.0..=1.0)
    });
    *WEIGHT
}
/// A memory written at the query's clock scores up to this much more…
pub const RECENCY_BONUS: f64 = 0.1;
/// …half of it at this age, in days.
pub const RECENCY_DAYS: f64 = 30.0;

/// The two arms combined by slot: `w × lexical + (1 − w) × semantic`,
/// each normalised first when `lexical_max` is given (the lexical score
/// over it, the cosine from `MIN_SIMILARITY..=1` to `0..=1`), else as they
/// are (one arm alone keeps its own scale).
pub fn combine(
    lexical: &[(u32, f32)],
    semantic: &[(u32, f32)],
    weight: f32,
    lexical_max: Option<f32>,
    slots: usize,
) -> Vec<(u32, f32)> {
    let normalise = lexical_max.is_some();
    let lexical_norm = |s: f32| match lexical_max {
        Some(max) if max > 0.0 => s / max,
        _ => s,
    };
    let semantic_norm = |s: f32| match normalise {
        true => semantic_norm(s),
        false => s,
    };
    AT.with_borrow_mut(|at| {
        // Where each slot's fused score is in `out`.
        at.begin(slots);
        let mut out: Vec<(u32, f32)> = Vec::with_capacity(lexical.len() + semantic.len());
        let mut add = |slot: u32, part: f32| match at.get(slot) {
            Some(i) => out[i as usize].1 += part,
            None => {
                at.set(slot, out.len() as u32);
                out.push((slot, part));
            }
        };
        for (slot, s) in lexical {
            add(*slot, weight * lexical_norm(*s));
        }
        for (slot, s) in semantic {
            add(*slot, (1.0 - weight) * semantic_norm(*s));
        }
        out
    })
}

thread_local! {
    /// `combine`'s index by slot, reused by every search of this thread.
    static AT: std::cell::RefCell<Stamped<u32>> = std::cell::RefCell::new(Stamped::default());
}

/// A cosine rescaled from `MIN_SIMILARITY..=1` to `0..=1`, as fusion
/// counts it.
pub fn semantic_norm(cosine: f32) -> f32 {
    ((cosine - MIN_SIMILARITY) / (1.0 - MIN_SIMILARITY)).clamp(0.0, 1.0)
}

/// The recency factor of a memory written at `created_at`, seen at `as_of`.
pub fn recency(created_at: DateTime<Utc>, as_of: DateTime<Utc>) -> f64 {
    let age_days = ((as_of - created_at).num_seconds().max(0) as f64) / 86_400.0;
    1.0 + RECENCY_BONUS / (1.0 + age_days / RECENCY_DAYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_arms_beat_one_and_weights_apply() {
        // Lexical 4 and 2 over a maximum of 4 are 1 and 0.5; cosines 1 and 0.84 are 1 and 0.8.
        let fused = combine(&[(0, 4.0), (1, 2.0)], &[(1, 1.0), (2, 0.84)], 0.5, Some(4.0), 3);
        let get = |slot| fused.iter().find(|(s, _)| *s == slot).unwrap().1;
        assert_eq!(get(0), 0.5);
        assert_eq!(get(1), 0.75);
        assert!((get(2) - 0.4).abs() < 1e-6, "{}", get(2));
        let lexical_only = combine(&[(0, 3.0)], &[(2, 1.0)], 1.0, None, 3);
        assert_eq!(
            lexical_only,
            [(0, 3.0), (2, 0.0)],
            "one arm alone keeps its scale"
        );
    }

    #[test]
    fn recency_breaks_ties_and_never_doubles() {
        let now = Utc::now();
        assert!((recency(now, now) - 1.1).abs() < 1e-9);
        let year = recency(now - chrono::Duration::days(365), now);
        assert!(year > 1.0 && year < 1.01);
        // A memory from the future of the clock counts as new, no more.
        assert!((recency(now + chrono::Duration::days(3), now) - 1.1).abs() < 1e-9);
    }
}
