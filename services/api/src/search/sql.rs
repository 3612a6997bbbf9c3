//! The search statement: observations and summaries that match, scored in
//! one projection (`UNION ALL`), ordered and paged in SQL; then the rows of
//! the page, loaded by id.
//!
//! The statement text depends only on the order. Every value is a bound
//! parameter at a fixed position; a filter left empty is bound as NULL (or
//! an empty array) and its condition reads `$n IS NULL OR …`, which
//! Postgres folds away when it plans with the values, leaving the indexes
//! of migrations 0003/0004 usable (GIN on `search`, on
//! `files_read || files_modified` and on `concepts`; btree on
//! `(project_id, created_at)`).
//!
//! | $  | value |
//! |----|-------|
//! | 1  | project id (every row is bounded to it) |
//! | 2  | `as_of`, or NULL for now |
//! | 3  | query text, or NULL |
//! | 4  | types (any of), `{}` for all |
//! | 5  | concepts (any of), `{}` for all |
//! | 6  | file path, or NULL |
//! | 7  | `LIKE` pattern for a path ending in `/<file>` |
//! | 8  | session id |
//! | 9  | agent of the session |
//! | 10 | platform source of the session |
//! | 11 | since (inclusive) |
//! | 12 | until (inclusive) |
//! | 13 | summaries wanted |
//! | 14 | rows to fetch (the page plus one, to know if there is more) |
//! | 15 | offset |

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

use super::{
    Filters, Order,
    rank::{AS_OF, TSQUERY, score},
};
use crate::store::observations::{self, ObservationRow, SummaryRow};

/// A hit before its row is loaded.
#[derive(Clone, Debug, FromRow)]
pub struct HitKey {
    /// `observation` or `summary`.
    pub source: String,
    pub id: Uuid,
    pub score: f64,
    /// The clock the page was computed at (for the next cursor).
    pub as_of: DateTime<Utc>,
}

pub struct Params<'a> {
    pub project_id: Uuid,
    pub as_of: Option<DateTime<Utc>>,
    pub query: Option<&'a str>,
    pub filters: &'a Filters,
    pub summaries: bool,
    pub fetch: i64,
    pub offset: i64,
}

/// Conditions shared by both sources: the project, the clock, the text, the
/// session and its agent, the date range. `alias` is the table's.
fn common_conditions(alias: &str) -> String {
    format!(
        "{alias}.project_id = $1
         AND {alias}.created_at <= {AS_OF}
         AND ($3::text IS NULL OR {alias}.search @@ {TSQUERY})
         AND ($8::uuid IS NULL OR {alias}.session_id = $8::uuid)
         AND (($9::text IS NULL AND $10::text IS NULL) OR EXISTS (
                SELECT 1 FROM sessions s WHERE s.project_id = $1 AND s.id = {alias}.session_id
                  AND ($9::text IS NULL OR s.agent = $9::text)
                  AND ($10::text IS NULL OR s.platform_source = $10::text)))
         AND ($11::timestamptz IS NULL OR {alias}.created_at >= $11::timestamptz)
         AND ($12::timestamptz IS NULL OR {alias}.created_at <= $12::timestamptz)"
    )
}

pub fn statement(order: Order) -> String {
    let order_by = match order {
        Order::Relevance => "score DESC, created_at DESC, id DESC",
        Order::Newest => "created_at DESC, id DESC",
        Order::Oldest => "created_at ASC, id ASC",
    };
    // Each source is ordered and cut to `offset + fetch` on its own (the
    // page lies within the union of both sources' tops), so listing the
    // newest walks `(project_id, created_at)` and stops early; then the two
    // are merged and paged. Ids are unique across both tables (UUIDs), so
    // `id` settles every tie.
    format!(
        "SELECT source, id, score, {AS_OF} AS as_of FROM (
             (SELECT 'observation'::text AS source, o.id, o.created_at, {obs_score} AS score
              FROM observations o
              WHERE {obs_common}
                AND (cardinality($4::text[]) = 0 OR o.kind = ANY($4::text[]))
                AND (cardinality($5::text[]) = 0 OR o.concepts && $5::text[])
                AND ($6::text IS NULL
                     OR (o.files_read || o.files_modified) @> ARRAY[$6::text]
                     OR EXISTS (SELECT 1 FROM unnest(o.files_read || o.files_modified) AS f(path)
                                WHERE f.path LIKE $7::text))
              ORDER BY {order_by} LIMIT $14 + $15)
             UNION ALL
             (SELECT 'summary'::text AS source, su.id, su.created_at, {sum_score} AS score
              FROM summaries su
              WHERE $13::boolean AND {sum_common}
              ORDER BY {order_by} LIMIT $14 + $15)
         ) hits
         ORDER BY {order_by}
         LIMIT $14 OFFSET $15",
        obs_score = score("o"),
        sum_score = score("su"),
        obs_common = common_conditions("o"),
        sum_common = common_conditions("su"),
    )
}

/// `%/<file>` with `LIKE`'s own characters escaped: a path that ends in `/<file>`.
pub fn suffix_pattern(file: &str) -> String {
    let mut pattern = String::from("%/");
    for c in file.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

pub async fn hits(pool: &PgPool, order: Order, p: &Params<'_>) -> sqlx::Result<Vec<HitKey>> {
    let f = p.filters;
    sqlx::query_as(sqlx::AssertSqlSafe(statement(order)))
        .bind(p.project_id)
        .bind(p.as_of)
        .bind(p.query)
        .bind(&f.kinds)
        .bind(&f.concepts)
        .bind(f.file.as_deref())
        .bind(f.file.as_deref().map(suffix_pattern))
        .bind(f.session_id)
        .bind(f.agent.as_deref())
        .bind(f.platform_source.as_deref())
        .bind(f.since)
        .bind(f.until)
        .bind(p.summaries)
        .bind(p.fetch)
        .bind(p.offset)
        .fetch_all(pool)
        .await
}

/// The rows of these hits, by id.
pub async fn load(
    pool: &PgPool,
    project_id: Uuid,
    keys: &[HitKey],
) -> sqlx::Result<(HashMap<Uuid, ObservationRow>, HashMap<Uuid, SummaryRow>)> {
    let ids =
        |source: &str| -> Vec<Uuid> { keys.iter().filter(|k| k.source == source).map(|k| k.id).collect() };
    let (observation_ids, summary_ids) = (ids("observation"), ids("summary"));
    let observations = async {
        if observation_ids.is_empty() {
            return Ok(vec![]);
        }
        observations::by_ids(pool, project_id, &observation_ids).await
    };
    let summaries = async {
        if summary_ids.is_empty() {
            return Ok(vec![]);
        }
        summaries_by_ids(pool, project_id, &summary_ids).await
    };
    let (observations, summaries) = tokio::try_join!(observations, summaries)?;
    Ok((
        observations.into_iter().map(|r| (r.id, r)).collect(),
        summaries.into_iter().map(|r| (r.id, r)).collect(),
    ))
}

async fn summaries_by_ids(pool: &PgPool, project_id: Uuid, ids: &[Uuid]) -> sqlx::Result<Vec<SummaryRow>> {
    sqlx::query_as(
        "SELECT id, session_id, scope, prompt_number, request, learned, completed, next_steps, created_at
         FROM summaries WHERE project_id = $1 AND id = ANY($2)",
    )
    .bind(project_id)
    .bind(ids)
    .fetch_all(pool)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_characters_in_a_file_name_are_literal() {
        assert_eq!(suffix_pattern("parser.rs"), "%/parser.rs");
        assert_eq!(suffix_pattern("a_b%c\\d"), "%/a\\_b\\%c\\\\d");
    }

    #[test]
    fn every_parameter_is_used_by_every_statement() {
        for order in [Order::Relevance, Order::Newest, Order::Oldest] {
            let sql = statement(order);
            for n in 1..=15 {
                assert!(sql.contains(&format!("${n}")), "${n} in {sql}");
            }
            assert!(!sql.contains("$16"));
        }
    }
}
