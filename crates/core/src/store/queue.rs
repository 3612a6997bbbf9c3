//! The generation queue's figures for the admin dashboard: depth by status,
//! the oldest due job's wait, completions per minute over the last hour,
//! and failed attempts by class over the last day. `team_id` `None` reads
//! every team (superadmin). And the generator sweeper's reads: how many
//! jobs are due, and the queue gauges.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

#[derive(Clone, Debug, Default, FromRow)]
pub struct Depth {
    pub queued: i64,
    pub processing: i64,
    pub failed: i64,
    pub cancelled: i64,
    /// Seconds since the oldest queued job fell due; `None` when none is due.
    pub oldest_due_age_seconds: Option<f64>,
    pub completed_last_5m: i64,
}

/// Jobs per open status, the oldest due job's wait, completions in the last 5 minutes.
#[tracing::instrument(skip(pool), err)]
pub async fn depth(pool: &PgPool, team_id: Option<Uuid>) -> sqlx::Result<Depth> {
    sqlx::query_as(
        "SELECT
             count(*) FILTER (WHERE status = 'queued') AS queued,
             count(*) FILTER (WHERE status = 'processing') AS processing,
             count(*) FILTER (WHERE status = 'failed') AS failed,
             count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
             extract(epoch FROM now() - min(next_attempt_at)
                 FILTER (WHERE status = 'queued' AND next_attempt_at <= now()))::float8 AS oldest_due_age_seconds,
             (SELECT count(*) FROM generation_jobs c
              WHERE c.status = 'completed' AND c.completed_at >= now() - interval '5 minutes'
                AND ($1::uuid IS NULL OR c.team_id = $1)) AS completed_last_5m
         FROM generation_jobs
         WHERE status IN ('queued', 'processing', 'failed', 'cancelled')
           AND ($1::uuid IS NULL OR team_id = $1)",
    )
    .bind(team_id)
    .fetch_one(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct MinuteCount {
    pub minute: DateTime<Utc>,
    pub count: i64,
}

/// Completions per minute, for the minutes of the last hour that had any
/// (the current minute included, 60 minutes in all).
#[tracing::instrument(skip(pool), err)]
pub async fn completed_per_minute(pool: &PgPool, team_id: Option<Uuid>) -> sqlx::Result<Vec<MinuteCount>> {
    sqlx::query_as(
        "SELECT date_trunc('minute', completed_at) AS minute, count(*) AS count
         FROM generation_jobs
         WHERE status = 'completed' AND completed_at >= date_trunc('minute', now()) - interval '59 minutes'
           AND ($1::uuid IS NULL OR team_id = $1)
         GROUP BY 1 ORDER BY 1",
    )
    .bind(team_id)
    .fetch_all(pool)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct ClassCount {
    pub class: String,
    pub count: i64,
}

/// Failed attempts of the last 24 hours by class: the prefix of the
/// generator's error (`transient`, `rate_limit`, `parse_error`,
/// `unrecoverable`, …), `lease expired` (rescued) or `attempts exhausted`.
#[tracing::instrument(skip(pool), err)]
pub async fn failures_by_class(pool: &PgPool, team_id: Option<Uuid>) -> sqlx::Result<Vec<ClassCount>> {
    sqlx::query_as(
        "SELECT CASE WHEN detail ? 'error'
                     THEN coalesce(substring(detail->>'error' FROM '^([a-z_]+):'), 'other')
                     ELSE detail->>'reason' END AS class,
                count(*) AS count
         FROM generation_job_events
         WHERE (detail ? 'error' OR detail->>'reason' IN ('lease expired', 'attempts exhausted'))
           AND created_at >= now() - interval '24 hours'
           AND ($1::uuid IS NULL OR team_id = $1)
         GROUP BY 1 ORDER BY 2 DESC, 1",
    )
    .bind(team_id)
    .fetch_all(pool)
    .await
}

/// Due jobs a worker could claim now, counted up to `cap`.
#[tracing::instrument(skip(pool))]
pub async fn due_count(pool: &PgPool, cap: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT 1 FROM generation_jobs
             WHERE status = 'queued' AND next_attempt_at <= now() AND attempts < max_attempts LIMIT $1) due",
    )
    .bind(cap)
    .fetch_one(pool)
    .await
}

/// Jobs by status, every team.
#[tracing::instrument(skip(pool))]
pub async fn count_by_status(pool: &PgPool) -> sqlx::Result<Vec<(String, i64)>> {
    sqlx::query_as("SELECT status, count(*) FROM generation_jobs GROUP BY status")
        .fetch_all(pool)
        .await
}

/// How long the oldest due job has waited, in seconds (`None`: none is due).
#[tracing::instrument(skip(pool))]
pub async fn oldest_due_seconds(pool: &PgPool) -> sqlx::Result<Option<f64>> {
    sqlx::query_scalar(
        "SELECT extract(epoch FROM now() - min(next_attempt_at))::float8 FROM generation_jobs
         WHERE status = 'queued' AND next_attempt_at <= now()",
    )
    .fetch_one(pool)
    .await
}
