//! The score of a hit, as a SQL expression.
//!
//! ```text
//! score = ts_rank_cd({0.1, 0.2, 0.4, 1.0}, search, websearch_to_tsquery('english', query))
//!         × (1 + 1 / (1 + age_days / 14))
//! ```
//!
//! - Text rank: cover density over the weighted vector the triggers of
//!   migration 0003 keep. Weights are Postgres' defaults, written out:
//!   A (title; a summary's request) 1.0, B (facts and subtitle; learned and
//!   completed) 0.4, C (narrative and content; the rest of a summary) 0.2,
//!   D (file paths) 0.1. No length normalisation.
//! - Recency: a bonus factor from 2 (created at `as_of`) through 1.5 (14
//!   days old) down towards 1 (long ago). `age_days` is measured from the
//!   search's `as_of`, not the wall clock, so a page's scores never move.
//!   It can at most double a rank, so a title match (1.0) always outranks
//!   a lone narrative match (0.2 × 2 = 0.4), whatever their ages; a facts
//!   match (0.4) ties a brand-new narrative match only at the limit.
//! - The query is the OR of its words (`query::terms`): a hit may match any
//!   of them, and cover density adds up every word matched, so a hit with
//!   more of the words ranks higher at the same weight (three narrative
//!   words 0.6, two 0.4, one 0.2).
//! - State: a stale observation (its files changed since) scores half, a
//!   superseded one (a newer observation describes the change) a quarter
//!   (`STATE_WEIGHTS`; migration 0014). Merged and archived ones are not searched.
//! - Without a query the score is 0 and hits come newest first.
//!
//! Ties (equal scores) go to the newer hit, then to the greater id.

/// `ts_rank_cd` weights in Postgres' order: D, C, B, A.
pub const WEIGHTS: [f32; 4] = [0.1, 0.2, 0.4, 1.0];
/// The age, in days, at which the recency bonus is half of a new hit's.
pub const RECENCY_DAYS: f64 = 14.0;

/// The search's clock: the cursor's `as_of` ($2), or the statement's time.
pub const AS_OF: &str = "coalesce($2::timestamptz, now())";
/// The wanted words ($3, ` or `-joined by `query::terms`) as a tsquery.
pub const TSQUERY: &str = "websearch_to_tsquery('english', $3::text)";
/// The excluded words ($16, ` or `-joined) as a tsquery: rows matching it are left out.
pub const EXCLUDE: &str = "websearch_to_tsquery('english', $16::text)";

/// The score of a row of `alias` (observations or summaries: both have `search` and `created_at`).
pub fn score(alias: &str) -> String {
    let [d, c, b, a] = WEIGHTS;
    format!(
        "CASE WHEN $3::text IS NULL THEN 0::float8 ELSE
             ts_rank_cd('{{{d}, {c}, {b}, {a}}}'::float4[], {alias}.search, {TSQUERY})::float8
             * (1 + 1 / (1 + greatest(0, extract(epoch FROM {AS_OF} - {alias}.created_at)::float8)
                             / 86400 / {RECENCY_DAYS:.1}))
         END"
    )
}

/// The factor of an observation's score for its state.
pub const STATE_WEIGHTS: [(&str, f64); 2] = [("stale", 0.5), ("superseded", 0.25)];

/// [`STATE_WEIGHTS`] as a SQL expression over `alias.state`.
pub fn state_weight(alias: &str) -> String {
    let arms: String = STATE_WEIGHTS
        .iter()
        .map(|(state, w)| format!(" WHEN '{state}' THEN {w:?}::float8"))
        .collect();
    format!("(CASE {alias}.state{arms} ELSE 1::float8 END)")
}

/// The age, in days since last used, at which context's use bonus is half a fresh one's.
pub const USE_DAYS: f64 = 30.0;

/// Context's bonus for recent use (`last_retrieved_at` of
/// `memory_retrievals`, joined as `retrievals`: injected or found since), from 2 (written or used now) towards 1: an old
/// memory nobody retrieved decays; one retrieved lately keeps its rank.
/// Search does not use it: a retrieval would move the scores of a paged search.
pub fn use_recency(alias: &str, retrievals: &str) -> String {
    format!(
        "(1 + 1 / (1 + greatest(0, extract(epoch FROM now() - greatest({alias}.created_at,
             coalesce({retrievals}.last_retrieved_at, {alias}.created_at)))::float8) / 86400 / {USE_DAYS:.1}))"
    )
}

/// The same formula in Rust, for documentation and tests.
pub fn blend(rank: f64, age_days: f64) -> f64 {
    rank * (1.0 + 1.0 / (1.0 + age_days.max(0.0) / RECENCY_DAYS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recency_at_most_doubles_a_rank() {
        assert_eq!(blend(1.0, 0.0), 2.0);
        assert_eq!(blend(1.0, 14.0), 1.5);
        assert!(blend(1.0, 3650.0) > 1.0);
        // Title (A) of a year-old observation above narrative (C) of a new one.
        assert!(blend(WEIGHTS[3] as f64, 365.0) > blend(WEIGHTS[1] as f64, 0.0));
    }

    #[test]
    fn stale_and_superseded_weigh_less() {
        assert_eq!(
            state_weight("o"),
            "(CASE o.state WHEN 'stale' THEN 0.5::float8 WHEN 'superseded' THEN 0.25::float8 ELSE 1::float8 END)"
        );
    }

    #[test]
    fn the_sql_names_the_weights() {
        let sql = score("o");
        assert!(sql.contains("'{0.1, 0.2, 0.4, 1}'::float4[]"), "{sql}");
        assert!(sql.contains("/ 14.0"), "{sql}");
    }
}
