//! The reads the context builder makes: a project's context settings, its
//! newest summaries and observations, observations and summaries by id, a
//! branch's memories — each bounded to one project, as of a time when given
//! (a commit's first sighting).

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

use crate::memory::lifecycle::MemoryState;
use crate::tenancy::Viewer;

#[derive(Clone, Debug, FromRow)]
pub struct ProjectSettings {
    pub name: String,
    pub context_budget_tokens: i32,
    pub prompt_context: bool,
    pub prompt_context_budget_tokens: i32,
    /// `team` or `private-first` (migration 0027).
    pub memory_visibility: String,
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
    pub state: MemoryState,
    /// The repository root (or working directory) of its session: paths are
    /// shown relative to it. Absent where a statement does not read it.
    #[sqlx(default)]
    pub root: Option<String>,
}

/// The project's context settings.
#[tracing::instrument(skip(pool))]
pub async fn settings(pool: &PgPool, project_id: Uuid) -> sqlx::Result<Option<ProjectSettings>> {
    sqlx::query_as(
        "SELECT name, context_budget_tokens, prompt_context, prompt_context_budget_tokens, memory_visibility
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

/// The newest `limit` summaries.
#[tracing::instrument(skip(pool))]
pub async fn newest_summaries(
    pool: &PgPool,
    project_id: Uuid,
    limit: i64,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<Vec<SummaryItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT id, session_id, scope, request, learned, completed, next_steps, created_at
         FROM summaries s WHERE project_id = $1 AND created_at <= coalesce($3::timestamptz, now()) AND {}
         ORDER BY created_at DESC, id DESC LIMIT $2",
        Viewer::condition("s", 4, 5)
    )))
    .bind(project_id)
    .bind(limit)
    .bind(as_of)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}

/// The newest `limit` observations context may show.
#[tracing::instrument(skip(pool))]
pub async fn newest_observations(
    pool: &PgPool,
    project_id: Uuid,
    limit: i64,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations WHERE project_id = $1 AND {} AND {}
         ORDER BY created_at DESC, id DESC LIMIT $2",
        columns_as_of(3),
        injected(3),
        Viewer::condition("observations", 4, 5)
    )))
    .bind(project_id)
    .bind(limit)
    .bind(as_of)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}

/// The project's observations, counted up to `cap`.
#[tracing::instrument(skip(pool))]
pub async fn count_observations(
    pool: &PgPool,
    project_id: Uuid,
    cap: i64,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM (SELECT 1 FROM observations o WHERE project_id = $1
                               AND created_at <= coalesce($3::timestamptz, now()) AND {} LIMIT $2) capped",
        Viewer::condition("o", 4, 5)
    )))
    .bind(project_id)
    .bind(cap)
    .bind(as_of)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_one(pool)
    .await
}

#[tracing::instrument(skip(pool, ids), fields(ids = ids.len()))]
/// The summaries of `ids`, as of `as_of`.
pub async fn summaries_by_ids(
    pool: &PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<Vec<SummaryItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT id, session_id, scope, request, learned, completed, next_steps, created_at
         FROM summaries s WHERE project_id = $1 AND id = ANY($2) AND created_at <= coalesce($3::timestamptz, now())
           AND {}",
        Viewer::condition("s", 4, 5)
    )))
    .bind(project_id)
    .bind(ids)
    .bind(as_of)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}

/// The newest `limit` observations (plans aside: they have their own
/// heading) of the project's sessions on `branch`.
#[tracing::instrument(skip(pool))]
pub async fn of_branch(
    pool: &PgPool,
    project_id: Uuid,
    branch: &str,
    limit: i64,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations
         WHERE project_id = $1 AND {} AND kind <> 'plan' AND {}
           AND session_id IN (SELECT id FROM sessions WHERE project_id = $1 AND branch = $2)
         ORDER BY created_at DESC, id DESC LIMIT $4",
        columns_as_of(3),
        injected(3),
        Viewer::condition("observations", 5, 6)
    )))
    .bind(project_id)
    .bind(branch)
    .bind(as_of)
    .bind(limit)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}

#[tracing::instrument(skip(pool, ids), fields(ids = ids.len()))]
/// The observations of `ids` the context may show, as of `as_of`.
pub async fn observations_by_ids(
    pool: &PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM observations WHERE project_id = $1 AND id = ANY($2) AND {} AND {}",
        columns_as_of(3),
        injected(3),
        Viewer::condition("observations", 4, 5)
    )))
    .bind(project_id)
    .bind(ids)
    .bind(as_of)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}
