//! Sessions as the dashboard reads them: a project's sessions newest first
//! with their counts, and one session's turns (events, observations,
//! summaries and jobs per prompt number), bounded.

use crate::tenancy::Viewer;
use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

/// Turns a timeline holds at most: the session's newest.
pub const MAX_TURNS: i64 = 200;
/// Events a timeline turn holds at most: the turn's first.
pub const MAX_EVENTS_PER_TURN: i64 = 500;

#[derive(Clone, Debug, FromRow)]
pub struct SessionSummaryRow {
    pub id: Uuid,
    pub project_id: Uuid,
    pub agent: String,
    pub external_session_id: String,
    pub cwd: Option<String>,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub last_event_at: Option<DateTime<Utc>>,
    pub turns: i32,
    pub events: i64,
    pub observations: i64,
    /// `sweeper` when the generator's sweeper ended it (no activity).
    pub ended_by: Option<String>,
    /// The member whose token opened it; none for a service token's.
    pub member_id: Option<Uuid>,
}

const SESSION_COLUMNS: &str = "
    SELECT s.id, s.project_id, s.agent, s.external_session_id, s.cwd, s.started_at, s.ended_at, s.member_id,
           s.metadata ->> 'ended_by' AS ended_by,
           e.last_event_at, s.prompt_counter AS turns, e.events, o.observations
    FROM sessions s
    CROSS JOIN LATERAL (SELECT count(*) AS events, max(occurred_at) AS last_event_at
                        FROM agent_events WHERE session_id = s.id) e
    CROSS JOIN LATERAL (SELECT count(*) AS observations
                        FROM observations WHERE session_id = s.id) o";

/// Where a page of sessions starts: after this (started_at, id).
#[derive(Clone, Copy, Debug)]
pub struct After {
    pub started_at: DateTime<Utc>,
    pub id: Uuid,
}

/// A project's sessions, newest started first, `limit` after `after`; one
/// member's only when `member_id` is given.
#[tracing::instrument(skip(pool), err)]
pub async fn list(
    pool: &PgPool,
    team_id: Uuid,
    project_id: Uuid,
    member_id: Option<Uuid>,
    after: Option<After>,
    limit: i64,
    viewer: Viewer,
) -> sqlx::Result<Vec<SessionSummaryRow>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{SESSION_COLUMNS}
         WHERE s.team_id = $1 AND s.project_id = $2 AND {}
           AND ($8::uuid IS NULL OR s.member_id = $8)
           AND ($3::timestamptz IS NULL OR (s.started_at, s.id) < ($3, $4))
         ORDER BY s.started_at DESC, s.id DESC
         LIMIT $5",
        Viewer::raw_condition("s", 6, 7)
    )))
    .bind(team_id)
    .bind(project_id)
    .bind(after.map(|a| a.started_at))
    .bind(after.map(|a| a.id))
    .bind(limit)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .bind(member_id)
    .fetch_all(pool)
    .await
}

/// One session the caller may see (its team, and its project for a project token).
#[tracing::instrument(skip(pool), err)]
pub async fn one(
    pool: &PgPool,
    team_id: Uuid,
    project_id: Option<Uuid>,
    id: Uuid,
    viewer: Viewer,
) -> sqlx::Result<Option<SessionSummaryRow>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{SESSION_COLUMNS}
         WHERE s.id = $1 AND s.team_id = $2 AND ($3::uuid IS NULL OR s.project_id = $3) AND {}",
        Viewer::raw_condition("s", 4, 5)
    )))
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_optional(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct TurnRow {
    pub prompt_number: i32,
    pub prompt: Option<String>,
    pub started_at: DateTime<Utc>,
    pub event_count: i64,
}

/// The session's newest `MAX_TURNS` turns and one more, which tells the
/// caller there are more (by prompt number, 0 for events before the first
/// prompt), oldest first; the prompt cut to 500 characters.
#[tracing::instrument(skip(pool), err)]
pub async fn turns(pool: &PgPool, session_id: Uuid) -> sqlx::Result<Vec<TurnRow>> {
    // A session's events are its project's (the foreign key): the session
    // id alone selects them, through agent_events_turn_idx.
    sqlx::query_as(
        "SELECT t.prompt_number, p.prompt, t.started_at, t.event_count
         FROM (SELECT coalesce(prompt_number, 0) AS prompt_number, min(occurred_at) AS started_at,
                      count(*) AS event_count
               FROM agent_events WHERE session_id = $1
               GROUP BY 1 ORDER BY 1 DESC LIMIT $2) t
         LEFT JOIN LATERAL (
             SELECT left(a.payload->>'prompt', 500) AS prompt FROM agent_events a
             WHERE a.session_id = $1
               AND (a.prompt_number = t.prompt_number OR (t.prompt_number = 0 AND a.prompt_number IS NULL))
               AND a.payload ? 'prompt'
             ORDER BY a.occurred_at, a.id LIMIT 1) p ON true
         ORDER BY t.prompt_number",
    )
    .bind(session_id)
    .bind(MAX_TURNS + 1)
    .fetch_all(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct EventRow {
    pub prompt_number: i32,
    pub id: Uuid,
    pub event_type: String,
    pub tool_name: Option<String>,
    pub occurred_at: DateTime<Utc>,
}

/// The first `MAX_EVENTS_PER_TURN` events of each of these turns (0: before the first prompt).
#[tracing::instrument(skip(pool, turns), err)]
pub async fn events(pool: &PgPool, session_id: Uuid, turns: &[i32]) -> sqlx::Result<Vec<EventRow>> {
    sqlx::query_as(
        "SELECT n.n AS prompt_number, e.id, e.event_type, e.tool_name, e.occurred_at
         FROM unnest($2::int[]) AS n(n)
         CROSS JOIN LATERAL (
             SELECT id, event_type, tool_name, occurred_at FROM agent_events
             WHERE session_id = $1 AND (prompt_number = n.n OR (n.n = 0 AND prompt_number IS NULL))
             ORDER BY occurred_at, id LIMIT $3) e
         ORDER BY n.n, e.occurred_at, e.id",
    )
    .bind(session_id)
    .bind(turns)
    .bind(MAX_EVENTS_PER_TURN)
    .fetch_all(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct ObservationRef {
    pub prompt_number: Option<i32>,
    pub id: Uuid,
    pub kind: String,
    pub title: String,
    pub created_at: DateTime<Utc>,
}

/// The session's observations (at most `MAX_TURNS × 50`, oldest first).
#[tracing::instrument(skip(pool), err)]
pub async fn observations(
    pool: &PgPool,
    project_id: Uuid,
    session_id: Uuid,
) -> sqlx::Result<Vec<ObservationRef>> {
    sqlx::query_as(
        "SELECT prompt_number, id, kind, title, created_at FROM observations
         WHERE project_id = $1 AND session_id = $2
         ORDER BY created_at, id LIMIT $3",
    )
    .bind(project_id)
    .bind(session_id)
    .bind(MAX_TURNS * 50)
    .fetch_all(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct SummaryRef {
    pub prompt_number: Option<i32>,
    pub id: Uuid,
    pub scope: String,
    pub request: String,
    pub completed: String,
    pub created_at: DateTime<Utc>,
}

/// The session's summaries (turn and session scope), oldest first.
#[tracing::instrument(skip(pool), err)]
pub async fn summaries(pool: &PgPool, project_id: Uuid, session_id: Uuid) -> sqlx::Result<Vec<SummaryRef>> {
    sqlx::query_as(
        "SELECT prompt_number, id, scope, request, completed, created_at FROM summaries
         WHERE project_id = $1 AND session_id = $2
         ORDER BY created_at, id LIMIT $3",
    )
    .bind(project_id)
    .bind(session_id)
    .bind(MAX_TURNS * 4)
    .fetch_all(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct JobRef {
    pub prompt_number: Option<i32>,
    pub id: Uuid,
    pub job_type: String,
    pub status: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub usage: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

/// The session's generation jobs, oldest first.
#[tracing::instrument(skip(pool), err)]
pub async fn jobs(pool: &PgPool, project_id: Uuid, session_id: Uuid) -> sqlx::Result<Vec<JobRef>> {
    sqlx::query_as(
        "SELECT prompt_number, id, job_type, status, attempts, last_error, usage, created_at, completed_at
         FROM generation_jobs
         WHERE project_id = $1 AND session_id = $2
         ORDER BY created_at, id LIMIT $3",
    )
    .bind(project_id)
    .bind(session_id)
    .bind(MAX_TURNS * 8)
    .fetch_all(pool)
    .await
}
