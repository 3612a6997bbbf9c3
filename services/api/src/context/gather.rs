//! What a context is made from, read from Postgres: the project's settings,
//! its newest summaries and observations, and (with a query) the
//! observations that match it best — by its words, and with an embedder by
//! its meaning too, the two fused as search fuses them (`relevant`). Every
//! query is bounded to one project.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

/// Newest summaries considered.
const SUMMARIES: i64 = 8;
/// Newest observations considered for the index.
const RECENT: i64 = 80;
/// Observations shown in full.
pub const DETAILED: i64 = 3;
/// Observations counted for the footer, at most.
pub const COUNT_CAP: i64 = 1000;

#[derive(Clone, Debug, FromRow)]
pub struct ProjectSettings {
    pub name: String,
    pub context_budget_tokens: i32,
    pub prompt_context: bool,
    pub prompt_context_budget_tokens: i32,
}

#[derive(Clone, Debug, FromRow)]
pub struct SummaryItem {
    pub id: Uuid,
    pub session_id: Uuid,
    pub scope: String,
    pub request: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, FromRow)]
pub struct ObservationItem {
    pub id: Uuid,
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub narrative: String,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub created_at: DateTime<Utc>,
    /// `live` or `stale` (context never reads the other states; migration 0014).
    pub state: String,
}

/// The candidates, newest first.
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    pub summaries: Vec<SummaryItem>,
    pub recent: Vec<ObservationItem>,
    /// Shown in full, best first: the query's best matches, or the newest.
    pub relevant: Vec<ObservationItem>,
    /// Observations in the project, counted up to `COUNT_CAP`.
    pub total_observations: i64,
}

pub async fn settings(pool: &PgPool, project_id: Uuid) -> sqlx::Result<Option<ProjectSettings>> {
    sqlx::query_as(
        "SELECT name, context_budget_tokens, prompt_context, prompt_context_budget_tokens
         FROM projects WHERE id = $1",
    )
    .bind(project_id)
    .fetch_optional(pool)
    .await
}

const OBSERVATION_COLUMNS: &str =
    "id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at, state";

/// [`OBSERVATION_COLUMNS`] as of the time in parameter `$p` (NULL: now): a
/// memory whose state changed after it is shown as it was then, live.
fn columns_as_of(p: usize) -> String {
    OBSERVATION_COLUMNS.replace(
        ", state",
        &format!(", CASE WHEN state_changed_at > ${p}::timestamptz THEN 'live' ELSE state END AS state"),
    )
}

/// The states context gives back, as of the time in parameter `$p` (NULL:
/// now): live and stale memories written by then; superseded, merged and
/// archived ones are never injected, unless they became so after it.
fn injected(p: usize) -> String {
    format!(
        "created_at <= coalesce(${p}::timestamptz, now())
         AND (state IN ('live', 'stale') OR state_changed_at > ${p}::timestamptz)"
    )
}

pub async fn candidates(pool: &PgPool, project_id: Uuid, query: Option<&str>) -> sqlx::Result<Candidates> {
    candidates_with(pool, None, project_id, query, None).await
}

/// [`candidates`], the relevant ones found by words and meaning when there
/// is an embedder; as of `as_of` (a commit's first sighting) when set.
pub async fn candidates_with(
    pool: &PgPool,
    embedder: Option<&cairn_embed::Embedder>,
    project_id: Uuid,
    query: Option<&str>,
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Candidates> {
    let summaries = sqlx::query_as(
        "SELECT id, session_id, scope, request, learned, completed, next_steps, created_at
         FROM summaries WHERE project_id = $1 AND created_at <= coalesce($3::timestamptz, now())
         ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(project_id)
    .bind(SUMMARIES)
    .bind(as_of)
    .fetch_all(pool);
    let recent = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations WHERE project_id = $1 AND {}
         ORDER BY created_at DESC, id DESC LIMIT $2",
        columns_as_of(3),
        injected(3)
    )))
    .bind(project_id)
    .bind(RECENT)
    .bind(as_of)
    .fetch_all(pool);
    // Counted up to a cap: the footer says "1000+" rather than scan a large project.
    let total = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT 1 FROM observations WHERE project_id = $1
                               AND created_at <= coalesce($3::timestamptz, now()) LIMIT $2) capped",
    )
    .bind(project_id)
    .bind(COUNT_CAP)
    .bind(as_of)
    .fetch_one(pool);
    let (summaries, recent, total_observations): (Vec<SummaryItem>, Vec<ObservationItem>, i64) =
        tokio::try_join!(summaries, recent, total)?;
    let relevant = match query.map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => relevant(pool, embedder, project_id, q, as_of).await?,
        None => recent.iter().take(DETAILED as usize).cloned().collect(),
    };
    Ok(Candidates {
        summaries,
        recent,
        relevant,
        total_observations,
    })
}

/// The best matches of any of the query's words, weighted title > facts >
/// narrative, newer first on ties. Only the newest `RANKED_MATCHES` matches
/// are ranked (as in search): ranking reads each match's whole vector.
pub async fn matching(pool: &PgPool, project_id: Uuid, or_query: &str) -> sqlx::Result<Vec<ObservationItem>> {
    matching_up_to(pool, project_id, or_query, DETAILED, None).await
}

/// Full-text matches fused with the vector hits (`relevant`).
const FUSED_MATCHES: i64 = 50;

#[tracing::instrument(skip(pool, or_query))]
async fn matching_up_to(
    pool: &PgPool,
    project_id: Uuid,
    or_query: &str,
    limit: i64,
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {columns} FROM (
             SELECT {inner}, search FROM observations
             WHERE project_id = $1 AND search @@ to_tsquery('english', $2) AND {injected}
             ORDER BY created_at DESC LIMIT $4) newest_matches
         LEFT JOIN memory_retrievals r ON r.observation_id = newest_matches.id
         ORDER BY ts_rank(search, to_tsquery('english', $2)) * {state} * {used} DESC, created_at DESC LIMIT $3",
        inner = columns_as_of(5),
        injected = injected(5),
        state = crate::search::rank::state_weight("newest_matches"),
        used = crate::search::rank::use_recency("newest_matches", "r"),
        columns = OBSERVATION_COLUMNS
            .split(", ")
            .map(|c| format!("newest_matches.{c}"))
            .collect::<Vec<_>>()
            .join(", "),
    )))
    // Planned with the words each time: a generic plan sorts every match.
    .persistent(false)
    .bind(project_id)
    .bind(or_query)
    .bind(limit)
    .bind(crate::search::RANKED_MATCHES)
    .bind(as_of)
    .fetch_all(pool)
    .await
}

/// The `DETAILED` observations most relevant to `text` (a prompt or a
/// query): its words' best matches (`matching`) and, with an embedder, the
/// observations closest in meaning (`search::vector`), fused by reciprocal
/// rank as search fuses them. Without an embedder, or when the text cannot
/// be embedded now (logged), the words' matches alone.
pub async fn relevant(
    pool: &PgPool,
    embedder: Option<&cairn_embed::Embedder>,
    project_id: Uuid,
    text: &str,
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Vec<ObservationItem>> {
    let words = any_word_query(text);
    let Some(embedder) = embedder else {
        return match words.is_empty() {
            true => Ok(vec![]),
            false => matching_up_to(pool, project_id, &words, DETAILED, as_of).await,
        };
    };
    let by_words = async {
        match words.is_empty() {
            true => Ok(vec![]),
            false => matching_up_to(pool, project_id, &words, FUSED_MATCHES, as_of).await,
        }
    };
    let by_meaning = async {
        let vector = match embedder.embed_one(text).await {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "prompt not embedded: related memories by words only");
                return Ok(vec![]);
            }
        };
        let filters = crate::search::Filters::default();
        let request = crate::search::vector::Request {
            project_id,
            as_of,
            filters: &filters,
            summaries: false,
            exclude: None,
            model: embedder.model(),
            query: &vector,
        };
        crate::search::vector::candidates(pool, &request)
            .await
            .map(|(similar, _)| similar)
    };
    let (by_words, by_meaning) = tokio::try_join!(by_words, by_meaning)?;
    let key = |id: Uuid| ("observation".to_string(), id);
    let fused = crate::search::fuse::rrf(&[
        by_words.iter().map(|o| key(o.id)).collect(),
        by_meaning.iter().map(|s| key(s.id)).collect(),
    ]);
    let ids: Vec<Uuid> = fused.iter().take(DETAILED as usize).map(|f| f.id).collect();
    let mut known: std::collections::HashMap<Uuid, ObservationItem> =
        by_words.into_iter().map(|o| (o.id, o)).collect();
    let missing: Vec<Uuid> = ids.iter().filter(|id| !known.contains_key(id)).copied().collect();
    if !missing.is_empty() {
        for o in by_ids(pool, project_id, &missing, as_of).await? {
            known.insert(o.id, o);
        }
    }
    Ok(ids.into_iter().filter_map(|id| known.remove(&id)).collect())
}

#[tracing::instrument(skip(pool, ids), fields(ids = ids.len()))]
async fn by_ids(
    pool: &PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations WHERE project_id = $1 AND id = ANY($2) AND {}",
        columns_as_of(3),
        injected(3)
    )))
    .bind(project_id)
    .bind(ids)
    .bind(as_of)
    .fetch_all(pool)
    .await
}

/// A prompt's words as an OR tsquery (`parser | panic | empty`): a prompt is
/// a sentence, not a search expression, so any word may match. Only letters,
/// digits and `_` survive, so the result is always valid tsquery syntax.
pub fn any_word_query(text: &str) -> String {
    let mut words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words.truncate(24);
    words.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::any_word_query;

    #[test]
    fn prompts_become_safe_or_queries() {
        assert_eq!(
            any_word_query("Fix the parser's panic: empty input!"),
            "empty | fix | input | panic | parser | the"
        );
        assert_eq!(any_word_query("a & b | !c <-> (d)"), "");
        assert_eq!(any_word_query("'; DROP TABLE x; --"), "drop | table");
    }
}
