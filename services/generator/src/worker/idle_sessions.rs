//! Unclean exits: an agent that crashed or was killed never sends
//! SessionEnd, so its session would stay open and unsummarised. The sweeper
//! ends a session with no event for `CAIRN_IDLE_SESSION_MS` as SessionEnd
//! would: its unsealed observation jobs (the open turn's, and turn 0's,
//! whose events came before any prompt) are sealed and made due, and its
//! session summary is queued. One statement; `FOR UPDATE SKIP LOCKED` and
//! the summary job's idempotency key make it safe with several generators
//! and repeated sweeps: a session is ended once and summarised once. The
//! session's `metadata.ended_by` says the sweeper ended it.

use std::time::Duration;

use sqlx::PgPool;

/// Sessions ended per pass, at most.
const BATCH: i64 = 100;

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Ended {
    pub sessions: i64,
    pub summaries: i64,
    pub sealed_jobs: i64,
}

/// Ends sessions idle for longer than `idle`.
#[tracing::instrument(skip(pool))]
pub async fn end_idle(pool: &PgPool, idle: Duration) -> sqlx::Result<Ended> {
    sqlx::query_as(
        "WITH idle AS (
             SELECT s.id FROM sessions s
             WHERE s.status = 'active' AND s.updated_at < now() - $1::interval
             ORDER BY s.updated_at LIMIT $2
             FOR UPDATE SKIP LOCKED
         ), ended AS (
             UPDATE sessions s SET status = 'ended', ended_at = now(), updated_at = now(),
                 metadata = s.metadata || jsonb_build_object('ended_by', 'sweeper',
                     'ended_reason', 'no activity for ' || $1::interval::text,
                     'last_activity_at', s.updated_at)
             FROM idle WHERE s.id = idle.id AND s.status = 'active'
             RETURNING s.id, s.team_id, s.project_id, s.prompt_counter
         ), sealed AS (
             UPDATE generation_jobs j SET sealed = true, next_attempt_at = now(), updated_at = now()
             FROM ended
             WHERE j.session_id = ended.id AND j.project_id = ended.project_id
               AND j.status = 'queued' AND j.job_type = 'observations' AND NOT j.sealed
             RETURNING j.id
         ), summarised AS (
             INSERT INTO generation_jobs (id, team_id, project_id, session_id, job_type, source_type,
                 prompt_number, sealed, idempotency_key)
             SELECT gen_random_uuid(), team_id, project_id, id, 'session_summary', 'session', prompt_counter,
                 true, 'session_summary:' || id || ':' || prompt_counter
             FROM ended WHERE prompt_counter > 0
             ON CONFLICT (project_id, idempotency_key) DO NOTHING
             RETURNING id
         )
         SELECT (SELECT count(*) FROM ended) AS sessions, (SELECT count(*) FROM summarised) AS summaries,
                (SELECT count(*) FROM sealed) AS sealed_jobs",
    )
    .bind(idle)
    .bind(BATCH)
    .fetch_one(pool)
    .await
}
