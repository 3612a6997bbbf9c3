//! Ending turns and sessions. A turn ends at its Stop (or claude-mem's end
//! call): its observation job is sealed and made due, and its turn summary
//! queued once. A session ends at SessionEnd, or when the generator's
//! sweeper finds it idle (an agent that crashed or was killed): every
//! observation job still open in it (the open turn's, and turn 0's, whose
//! events came before any prompt) is sealed and made due, and its session
//! summary is queued once — the same rule and the same idempotency key
//! whichever way it ended, so a session is summarised once.

use std::time::Duration;

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::{
    store::jobs::{self, JobRow},
    tenancy::ProjectRef,
};

/// The observation jobs of session `$1` still taking events.
const OPEN_JOBS: &str =
    "j.session_id = $1 AND j.status = 'queued' AND j.job_type = 'observations' AND NOT j.sealed";

/// The session summary's idempotency key, in SQL over a session row `s`
/// ([`session_summary_key`] in Rust).
const SESSION_SUMMARY_KEY: &str = "'session_summary:' || s.id || ':' || s.prompt_counter";

/// The key of session `session`'s summary after `turns` turns: one job per
/// session and turn count.
pub fn session_summary_key(session: Uuid, turns: i32) -> String {
    format!("session_summary:{session}:{turns}")
}

/// The key of turn `turn`'s summary.
pub fn turn_summary_key(session: Uuid, turn: i32) -> String {
    format!("turn_summary:{session}:{turn}")
}

/// What ending a turn or a session queued.
#[derive(Debug, Default)]
pub struct Ended {
    /// The summary job, when one is due to be written.
    pub summary: Option<JobRow>,
    /// Every job made due, for wake-ups.
    pub due: Vec<Uuid>,
}

/// Seals the session's open observation jobs and makes them due.
async fn seal_open_jobs(conn: &mut PgConnection, session: Uuid) -> sqlx::Result<Vec<Uuid>> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "UPDATE generation_jobs j SET sealed = true, next_attempt_at = now(), updated_at = now()
         WHERE {OPEN_JOBS} RETURNING j.id"
    )))
    .bind(session)
    .fetch_all(conn)
    .await
}

/// Ends turn `turn` of `session`: its observation job sealed and due, its
/// summary queued unless `summarise` is false (a private turn, or none yet).
#[tracing::instrument(skip(conn))]
pub async fn end_turn(
    conn: &mut PgConnection,
    project: ProjectRef,
    session: Uuid,
    turn: i32,
    event: Option<Uuid>,
    summarise: bool,
) -> sqlx::Result<Ended> {
    let mut due: Vec<Uuid> = jobs::seal_turn(&mut *conn, session, turn)
        .await?
        .map(|j| j.id)
        .into_iter()
        .collect();
    let summary = if summarise {
        let key = turn_summary_key(session, turn);
        let job = jobs::ensure_job(
            conn,
            project,
            Some(session),
            event,
            "turn_summary",
            Some(turn),
            &key,
        )
        .await?;
        if job.is_due() {
            due.push(job.id);
        }
        Some(job)
    } else {
        None
    };
    Ok(Ended { summary, due })
}

/// Ends `session` after `turns` turns: every open observation job sealed
/// and due, and the session's summary queued when it had a turn.
#[tracing::instrument(skip(conn))]
pub async fn end_session(
    conn: &mut PgConnection,
    project: ProjectRef,
    session: Uuid,
    turns: i32,
    event: Option<Uuid>,
) -> sqlx::Result<Ended> {
    let mut due = seal_open_jobs(&mut *conn, session).await?;
    if turns == 0 {
        // Nothing was asked in this session: nothing to summarise.
        return Ok(Ended { summary: None, due });
    }
    let key = session_summary_key(session, turns);
    let job = jobs::ensure_job(
        conn,
        project,
        Some(session),
        event,
        "session_summary",
        Some(turns),
        &key,
    )
    .await?;
    if job.is_due() {
        due.push(job.id);
    }
    Ok(Ended {
        summary: Some(job),
        due,
    })
}

/// Sessions ended per sweep, at most.
const IDLE_BATCH: i64 = 100;

/// What one sweep of idle sessions did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct EndedIdle {
    pub sessions: i64,
    pub summaries: i64,
    pub sealed_jobs: i64,
}

/// Ends sessions with no event for longer than `idle`, as SessionEnd would
/// ([`end_session`]'s rule, set-based): `FOR UPDATE SKIP LOCKED` and the
/// summary's key make it safe with several generators and repeated sweeps.
/// The session's `metadata.ended_by` says the sweeper ended it.
#[tracing::instrument(skip(pool))]
pub async fn end_idle(pool: &PgPool, idle: Duration) -> sqlx::Result<EndedIdle> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
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
             WHERE {} AND j.project_id = ended.project_id
             RETURNING j.id
         ), summarised AS (
             INSERT INTO generation_jobs (id, team_id, project_id, session_id, job_type, source_type,
                 prompt_number, sealed, idempotency_key)
             SELECT gen_random_uuid(), s.team_id, s.project_id, s.id, 'session_summary', 'session',
                 s.prompt_counter, true, {SESSION_SUMMARY_KEY}
             FROM ended s WHERE s.prompt_counter > 0
             ON CONFLICT (project_id, idempotency_key) DO NOTHING
             RETURNING id
         )
         SELECT (SELECT count(*) FROM ended) AS sessions, (SELECT count(*) FROM summarised) AS summaries,
                (SELECT count(*) FROM sealed) AS sealed_jobs",
        OPEN_JOBS.replace("$1", "ended.id")
    )))
    .bind(idle)
    .bind(IDLE_BATCH)
    .fetch_one(pool)
    .await
}
