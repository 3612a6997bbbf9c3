//! Generation jobs as the API writes and reads them: the coalescing upserts of
//! the ingest transaction, reads, and the operator's retry and cancel.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, prelude::FromRow};
use uuid::Uuid;

use cairn_shared::jobs::{JobStatus, JobType};

use crate::tenancy::ProjectRef;

#[derive(Clone, Debug, FromRow)]
pub struct JobRow {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub agent_event_id: Option<Uuid>,
    pub job_type: JobType,
    pub source_type: String,
    pub prompt_number: Option<i32>,
    pub status: JobStatus,
    pub attempts: i32,
    pub max_attempts: i32,
    pub retried_count: i32,
    pub event_count: i32,
    pub sealed: bool,
    pub next_attempt_at: DateTime<Utc>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
}

impl JobRow {
    /// Runnable now, so worth a wake-up.
    pub fn is_due(&self) -> bool {
        self.status == JobStatus::Queued && self.next_attempt_at <= Utc::now()
    }
}

macro_rules! columns {
    () => {
        "id, team_id, project_id, session_id, agent_event_id, job_type, source_type, prompt_number, status,
         attempts, max_attempts, retried_count, event_count, sealed, next_attempt_at, last_error, created_at,
         updated_at, completed_at, failed_at, cancelled_at"
    };
}

/// Adds one event to its turn's open observation job, creating the job when
/// the turn has none open. The job is sealed (takes no more events) and made
/// due at `max_events`, or at once when `seal_now`; otherwise it becomes due
/// `idle` after the turn's last event.
pub async fn join_turn(
    conn: &mut PgConnection,
    project: ProjectRef,
    (session_id, prompt_number): (Uuid, i32),
    event_id: Uuid,
    policy: &crate::ingest::Coalescing,
    seal_now: bool,
) -> sqlx::Result<JobRow> {
    let job_id = Uuid::now_v7();
    sqlx::query_as(concat!(
        "INSERT INTO generation_jobs AS j (id, team_id, project_id, session_id, agent_event_id, job_type,
             source_type, prompt_number, event_count, sealed, next_attempt_at, idempotency_key)
         VALUES ($1, $2, $3, $4, $5, 'observations', 'agent_event', $6, 1, $9 OR 1 >= $7,
             CASE WHEN $9 OR 1 >= $7 THEN now() ELSE now() + $8 END,
             'observations:' || $4 || ':' || $6 || ':' || $1)
         ON CONFLICT (session_id, prompt_number) WHERE status = 'queued' AND job_type = 'observations' AND NOT sealed
         DO UPDATE SET
             event_count = j.event_count + 1,
             sealed = $9 OR j.event_count + 1 >= $7,
             next_attempt_at = CASE WHEN $9 OR j.event_count + 1 >= $7 THEN now() ELSE now() + $8 END,
             updated_at = now()
         RETURNING ",
        columns!()
    ))
    .bind(job_id)
    .bind(project.team_id)
    .bind(project.id)
    .bind(session_id)
    .bind(event_id)
    .bind(prompt_number)
    .bind(policy.max_turn_events)
    .bind(policy.turn_idle)
    .bind(seal_now)
    .fetch_one(conn)
    .await
}

/// Seals the turn's open observation job and makes it due now (the turn ended).
pub async fn seal_turn(
    conn: &mut PgConnection,
    session_id: Uuid,
    prompt_number: i32,
) -> sqlx::Result<Option<JobRow>> {
    sqlx::query_as(concat!(
        "UPDATE generation_jobs SET sealed = true, next_attempt_at = now(), updated_at = now()
         WHERE session_id = $1 AND prompt_number = $2 AND status = 'queued' AND job_type = 'observations'
           AND NOT sealed
         RETURNING ",
        columns!()
    ))
    .bind(session_id)
    .bind(prompt_number)
    .fetch_optional(conn)
    .await
}

/// Creates a sealed, due job once per key; a second request returns the first job.
pub async fn ensure_job(
    conn: &mut PgConnection,
    project: ProjectRef,
    session_id: Option<Uuid>,
    event_id: Option<Uuid>,
    job_type: &str,
    prompt_number: Option<i32>,
    key: &str,
) -> sqlx::Result<JobRow> {
    let inserted: Option<JobRow> = sqlx::query_as(concat!(
        "INSERT INTO generation_jobs (id, team_id, project_id, session_id, agent_event_id, job_type,
             source_type, prompt_number, sealed, idempotency_key)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $5::uuid IS NULL THEN 'session' ELSE 'agent_event' END,
             $7, true, $8)
         ON CONFLICT (project_id, idempotency_key) DO NOTHING
         RETURNING ",
        columns!()
    ))
    .bind(Uuid::now_v7())
    .bind(project.team_id)
    .bind(project.id)
    .bind(session_id)
    .bind(event_id)
    .bind(job_type)
    .bind(prompt_number)
    .bind(key)
    .fetch_optional(&mut *conn)
    .await?;
    match inserted {
        Some(job) => Ok(job),
        None => {
            sqlx::query_as(concat!(
                "SELECT ",
                columns!(),
                " FROM generation_jobs WHERE project_id = $1 AND idempotency_key = $2"
            ))
            .bind(project.id)
            .bind(key)
            .fetch_one(conn)
            .await
        }
    }
}

pub async fn get(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Option<Uuid>,
    id: Uuid,
) -> sqlx::Result<Option<JobRow>> {
    sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM generation_jobs WHERE id = $1 AND team_id = $2 AND ($3::uuid IS NULL OR project_id = $3)"
    ))
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .fetch_optional(db)
    .await
}

pub struct JobFilter {
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
    pub status: Option<String>,
    pub source_type: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub limit: i64,
    pub offset: i64,
}

pub async fn list(db: &sqlx::PgPool, f: &JobFilter) -> sqlx::Result<(Vec<JobRow>, i64)> {
    let rows = sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM generation_jobs WHERE team_id = $1 AND ($2::uuid IS NULL OR project_id = $2)
           AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR source_type = $4)
           AND ($5::timestamptz IS NULL OR created_at >= $5)
         ORDER BY created_at DESC, id DESC LIMIT $6 OFFSET $7"
    ))
    .bind(f.team_id)
    .bind(f.project_id)
    .bind(&f.status)
    .bind(&f.source_type)
    .bind(f.since)
    .bind(f.limit)
    .bind(f.offset)
    .fetch_all(db)
    .await?;
    let total = sqlx::query_scalar(
        "SELECT count(*) FROM generation_jobs WHERE team_id = $1 AND ($2::uuid IS NULL OR project_id = $2)
           AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR source_type = $4)
           AND ($5::timestamptz IS NULL OR created_at >= $5)",
    )
    .bind(f.team_id)
    .bind(f.project_id)
    .bind(&f.status)
    .bind(&f.source_type)
    .bind(f.since)
    .fetch_one(db)
    .await?;
    Ok((rows, total))
}

/// The queue as health and `/v1/info` report it.
pub struct QueueStats {
    pub by_status: std::collections::BTreeMap<String, i64>,
    /// How long the longest-waiting due job has waited since it became due.
    pub oldest_queued_age_seconds: Option<f64>,
}

/// Job counts by status and the oldest due job's wait, for everything
/// (`None`), a team, or one project.
pub async fn queue_stats(
    db: &sqlx::PgPool,
    team_id: Option<Uuid>,
    project_id: Option<Uuid>,
) -> sqlx::Result<QueueStats> {
    let counts: Vec<(String, i64)> = sqlx::query_as(
        "SELECT status, count(*) FROM generation_jobs
         WHERE ($1::uuid IS NULL OR team_id = $1) AND ($2::uuid IS NULL OR project_id = $2) GROUP BY status",
    )
    .bind(team_id)
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let oldest: Option<f64> = sqlx::query_scalar(
        "SELECT extract(epoch FROM now() - min(next_attempt_at))::float8 FROM generation_jobs
         WHERE status = 'queued' AND next_attempt_at <= now()
           AND ($1::uuid IS NULL OR team_id = $1) AND ($2::uuid IS NULL OR project_id = $2)",
    )
    .bind(team_id)
    .bind(project_id)
    .fetch_one(db)
    .await?;
    let mut by_status: std::collections::BTreeMap<String, i64> = cairn_shared::jobs::JobStatus::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), 0))
        .collect();
    by_status.extend(counts);
    Ok(QueueStats {
        by_status,
        oldest_queued_age_seconds: oldest,
    })
}

/// A job's status and when it last changed, as text (`None`: no such job).
#[tracing::instrument(skip(db))]
pub async fn status_of(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<Option<(String, DateTime<Utc>)>> {
    sqlx::query_as("SELECT status, updated_at FROM generation_jobs WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// Writes a token-budget decision (`generation::budget`) on a job while it
/// is still being worked.
#[tracing::instrument(skip(db, detail), err)]
pub async fn record_budget(
    db: impl PgExecutor<'_>,
    job_id: Uuid,
    state: &str,
    detail: serde_json::Value,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE generation_jobs SET budget_state = $2, budget_detail = $3
         WHERE id = $1 AND status = 'processing'",
    )
    .bind(job_id)
    .bind(state)
    .bind(detail)
    .execute(db)
    .await
    .map(drop)
}
