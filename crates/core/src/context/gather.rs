//! What a context is made from, read from Postgres: the project's settings,
//! its newest summaries and observations, and (with a query) the
//! observations that match it best — by its words, and with an embedder by
//! its meaning too, the two fused as search fuses them (`relevant`). Every
//! query is bounded to one project.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};

use crate::{engine::Engine, error::Result, store::file_memories};
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
    /// The repository root (or working directory) of its session: paths are
    /// shown relative to it. Absent where a statement does not read it.
    #[sqlx(default)]
    pub root: Option<String>,
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

const OBSERVATION_COLUMNS: &str = "id, kind, title, subtitle, facts, narrative, files_read, files_modified, \
     created_at, (SELECT coalesce(s.repo_root, s.cwd) FROM sessions s WHERE s.id = observations.session_id) AS root, state";

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

/// What a session is working on, as its hook saw it at the start.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkAtHand<'a> {
    /// The checked-out branch.
    pub branch: Option<&'a str>,
    /// The files changed in the worktree, in every form a memory may name them.
    pub changed: &'a [String],
}

/// What a context is built from; a query's relevant memories found by the
/// retrieval engine; as of `as_of` (a commit's first sighting) when set.
pub async fn candidates(
    state: &Engine,
    project_id: Uuid,
    query: Option<&str>,
    work: &WorkAtHand<'_>,
    as_of: Option<DateTime<Utc>>,
) -> Result<Candidates> {
    let pool = &state.pool;
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
        Some(q) => relevant(state, project_id, q, as_of).await?,
        None => {
            // The work at hand first: memories of the files changed in the
            // worktree, then of this branch's earlier sessions, then the newest.
            let mut relevant = match work.changed {
                [] => vec![],
                paths => file_memories::of_files(pool, project_id, paths, DETAILED).await?,
            };
            if let Some(b) = work.branch.filter(|b| !is_default_branch(b)) {
                relevant.extend(of_branch(pool, project_id, b, as_of).await?);
            }
            let mut seen = std::collections::HashSet::new();
            relevant.retain(|o| seen.insert(o.id));
            relevant.truncate(DETAILED as usize);
            for o in &recent {
                if relevant.len() >= DETAILED as usize {
                    break;
                }
                if !relevant.iter().any(|r| r.id == o.id) {
                    relevant.push(o.clone());
                }
            }
            relevant
        }
    };
    Ok(Candidates {
        summaries,
        recent,
        relevant,
        total_observations,
    })
}

/// The `DETAILED` observations most relevant to `text` (a prompt or a
/// query), from the retrieval engine: by words and, with an embedder, by
/// meaning, over every memory of the project; each with its fused score.
/// When the text cannot be embedded now (logged), by words alone.
pub async fn relevant(
    state: &Engine,
    project_id: Uuid,
    text: &str,
    as_of: Option<DateTime<Utc>>,
) -> Result<Vec<ObservationItem>> {
    Ok(
        relevant_scored(state, project_id, text, as_of, DETAILED as usize, false)
            .await?
            .into_iter()
            .map(|(o, _)| o)
            .collect(),
    )
}

/// [`relevant`], at most `want`, with the engine's hits (best first); turn
/// and session summaries too when `summaries` (each shown as an item whose
/// kind is `turn summary` or `session summary`: the prompt as its title,
/// what was learned, done and left to do as its facts).
pub async fn relevant_scored(
    state: &Engine,
    project_id: Uuid,
    text: &str,
    as_of: Option<DateTime<Utc>>,
    want: usize,
    summaries: bool,
) -> Result<Vec<(ObservationItem, cairn_retrieval::Hit)>> {
    let vector = match &state.embedder {
        Some(embedder) => match state.retrieval.embed_query(embedder, text).await {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(error = %e, "text not embedded: related memories by words only");
                None
            }
        },
        None => None,
    };
    let filters = cairn_retrieval::Filters::default();
    let query = cairn_retrieval::Query {
        project_id,
        text,
        exclude: "",
        vector: vector.as_deref().map(Vec::as_slice),
        filters: &filters,
        as_of: as_of.unwrap_or_else(Utc::now),
        summaries,
        mode: match vector {
            Some(_) => cairn_retrieval::Mode::Hybrid,
            None => cairn_retrieval::Mode::Lexical,
        },
        want,
        lexical_weight: None,
    };
    let hits = state
        .retrieval
        .search(&query)
        .await
        .map_err(crate::search::engine::failed)?
        .unwrap_or_default();
    let of = |source| -> Vec<Uuid> { hits.iter().filter(|h| h.source == source).map(|h| h.id).collect() };
    let (observation_ids, summary_ids) = (
        of(cairn_retrieval::Source::Observation),
        of(cairn_retrieval::Source::Summary),
    );
    let mut known: std::collections::HashMap<Uuid, ObservationItem> =
        by_ids(&state.pool, project_id, &observation_ids, as_of)
            .await?
            .into_iter()
            .map(|o| (o.id, o))
            .collect();
    if !summary_ids.is_empty() {
        for s in summaries_by_ids(&state.pool, project_id, &summary_ids, as_of).await? {
            known.insert(s.id, summary_item(s));
        }
    }
    Ok(hits
        .into_iter()
        .filter_map(|h| known.remove(&h.id).map(|o| (o, h)))
        .collect())
}

/// A summary as an item shown in full: its prompt as the title, what was
/// learned, done and left to do as facts.
fn summary_item(s: SummaryItem) -> ObservationItem {
    let facts = [
        ("learned", &s.learned),
        ("done", &s.completed),
        ("next", &s.next_steps),
    ]
    .into_iter()
    .filter(|(_, t)| !t.trim().is_empty())
    .map(|(label, t)| format!("{label}: {}", t.trim()))
    .collect();
    ObservationItem {
        id: s.id,
        kind: format!("{} summary", s.scope),
        title: s.request,
        subtitle: String::new(),
        facts,
        narrative: String::new(),
        files_read: vec![],
        files_modified: vec![],
        created_at: s.created_at,
        state: "live".into(),
        root: None,
    }
}

#[tracing::instrument(skip(pool, ids), fields(ids = ids.len()))]
async fn summaries_by_ids(
    pool: &PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Vec<SummaryItem>> {
    sqlx::query_as(
        "SELECT id, session_id, scope, request, learned, completed, next_steps, created_at
         FROM summaries WHERE project_id = $1 AND id = ANY($2) AND created_at <= coalesce($3::timestamptz, now())",
    )
    .bind(project_id)
    .bind(ids)
    .bind(as_of)
    .fetch_all(pool)
    .await
}

/// Branches every session works on: memories of them say nothing of the work at hand.
fn is_default_branch(branch: &str) -> bool {
    matches!(branch, "main" | "master" | "trunk" | "develop" | "dev" | "HEAD")
}

/// The newest `DETAILED` observations (plans aside: they have their own
/// heading) of the project's sessions on `branch`.
#[tracing::instrument(skip(pool))]
async fn of_branch(
    pool: &PgPool,
    project_id: Uuid,
    branch: &str,
    as_of: Option<DateTime<Utc>>,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations
         WHERE project_id = $1 AND {} AND kind <> 'plan'
           AND session_id IN (SELECT id FROM sessions WHERE project_id = $1 AND branch = $2)
         ORDER BY created_at DESC, id DESC LIMIT $4",
        columns_as_of(3),
        injected(3)
    )))
    .bind(project_id)
    .bind(branch)
    .bind(as_of)
    .bind(DETAILED)
    .fetch_all(pool)
    .await
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
