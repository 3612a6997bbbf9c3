//! A claimed job's material in one round trip (`generation::job::load`
//! says what each job type reads): the project's name, the session's agent
//! and working directory, and the job's events aggregated into one JSON
//! array; who writes a turn's summary (`summary_by`, migration 0011); and
//! the stored summaries a session summary builds on.

use cairn_shared::jobs::state_machine::ClaimedJob;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sqlx::{PgPool, prelude::FromRow, types::Json};
use uuid::Uuid;

use crate::generation::material::{EventRecord, Material};
use crate::generation::prompt::TurnSummary;

/// Which events a job's material holds.
#[derive(Clone, Copy, Debug)]
pub enum Events {
    /// An observation job's own events and the prompt that opened its turn.
    Own,
    /// `Own`, taking the turn's summary when it can (and then the Stop too).
    Taking,
    /// The turn's first events.
    Turn,
    /// The session's newest events, without tool responses.
    Session,
}

/// What a summary job waits for before it loads.
#[derive(Clone, Copy, Debug)]
pub enum Wait {
    Turn,
    Session,
}

/// One query per job type, bound alike: `$1` project, `$2` job, `$3`
/// session, `$4` prompt number, `$5` event limit (a query need not use them
/// all: sqlx sends every parameter's type). `taken` is the turn_summary job
/// whose summary this job takes (see `take_turn_summary!`), or none. The
/// events subquery (`e`) gives the events' columns and `id`; they are
/// aggregated in `(occurred_at, id)` order. No project row, no row: the
/// load fails as a missing project did. No session row: agent and cwd are NULL.
macro_rules! material_sql {
    ($events:literal) => {
        material_sql!("SELECT NULL::uuid AS id", $events)
    };
    ($taken:expr, $events:literal) => {
        concat!(
            "WITH taken AS (",
            $taken,
            ")
             SELECT (SELECT id FROM taken) AS turn_job, p.name AS project, s.agent, s.cwd,
                    COALESCE((SELECT json_agg(json_build_object(
                                  'event_type', e.event_type, 'tool_name', e.tool_name,
                                  'prompt_number', e.prompt_number, 'payload', e.payload,
                                  'occurred_at', e.occurred_at) ORDER BY e.occurred_at, e.id)
                              FROM (",
            $events,
            ") e), '[]'::json) AS events
             FROM projects p
             LEFT JOIN sessions s ON s.id = $3 AND s.project_id = p.id
             WHERE p.id = $1"
        )
    };
}

/// The job's own events, and the prompt that opened its turn.
const OBSERVATIONS_SQL: &str = material_sql!(
    "SELECT id, event_type, tool_name, prompt_number, payload, occurred_at FROM agent_events
     WHERE project_id = $1 AND (job_id = $2
        OR (session_id = $3 AND prompt_number = $4 AND job_id IS NULL AND payload ? 'prompt'))"
);

/// The turn's last observation job takes the writing of the turn's summary
/// when the turn has ended (its turn_summary job exists) and no job took it
/// yet (or this one did, on an earlier attempt); `RETURNING` the
/// turn_summary job. A macro, as `concat!` takes only literals.
macro_rules! take_turn_summary {
    () => {
        "UPDATE generation_jobs t SET summary_by = $2
         WHERE t.project_id = $1 AND t.session_id = $3 AND t.prompt_number = $4 AND t.job_type = 'turn_summary'
           AND (t.summary_by = $2 OR (t.summary_by IS NULL AND t.status IN ('queued', 'processing')))
           AND NOT EXISTS (
               SELECT 1 FROM generation_jobs o, generation_jobs me
               WHERE me.id = $2 AND o.session_id = $3 AND o.prompt_number = $4
                 AND o.job_type = 'observations' AND (o.created_at, o.id) > (me.created_at, me.id))
         RETURNING t.id"
    };
}

/// An observation job's load: `take_turn_summary!`, and in the same
/// statement the job's own events, the prompt that opened its turn, and,
/// when it took the turn's summary, the events of the turn's turn_summary
/// job (the Stop).
const TAKING_SQL: &str = material_sql!(
    take_turn_summary!(),
    "SELECT id, event_type, tool_name, prompt_number, payload, occurred_at FROM agent_events
     WHERE project_id = $1 AND (job_id = $2 OR job_id = (SELECT id FROM taken)
        OR (session_id = $3 AND prompt_number = $4 AND job_id IS NULL AND payload ? 'prompt'))"
);

/// The turn's first events.
const TURN_SQL: &str = material_sql!(
    "SELECT id, event_type, tool_name, prompt_number, payload, occurred_at FROM agent_events
     WHERE project_id = $1 AND session_id = $3 AND prompt_number = $4
     ORDER BY occurred_at, id LIMIT $5"
);

/// The session's newest events. Tool responses are left out: a session
/// digest needs what was done, not its output.
const SESSION_SQL: &str = material_sql!(
    "SELECT id, event_type, tool_name, prompt_number, payload - 'tool_response' AS payload, occurred_at
     FROM agent_events WHERE project_id = $1 AND session_id = $3
     ORDER BY occurred_at DESC, id DESC LIMIT $5"
);

#[derive(FromRow)]
struct MaterialRow {
    turn_job: Option<Uuid>,
    project: String,
    agent: Option<String>,
    cwd: Option<String>,
    events: Json<Vec<EventRow>>,
}

#[derive(Deserialize)]
struct EventRow {
    event_type: String,
    tool_name: Option<String>,
    prompt_number: Option<i32>,
    payload: serde_json::Value,
    occurred_at: DateTime<Utc>,
}

/// A turn_summary job takes the writing of its own summary unless a job
/// took it first; returns the job that writes it.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
pub async fn own_turn_summary(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Option<Uuid>> {
    sqlx::query_scalar(
        "UPDATE generation_jobs SET summary_by = coalesce(summary_by, id)
         WHERE id = $1 AND project_id = $2 RETURNING summary_by",
    )
    .bind(job.id)
    .bind(job.project_id)
    .fetch_optional(pool)
    .await
    .map(Option::flatten)
}

/// Whether a turn summary should wait: nobody took its summary yet and the
/// turn's last observation job is due but not started, or started a moment
/// ago (it may be about to take it).
const TURN_WAITING_SQL: &str = "SELECT EXISTS (
    SELECT 1 FROM generation_jobs t, generation_jobs o
    WHERE t.id = $1 AND t.project_id = $2 AND t.summary_by IS NULL
      AND o.session_id = $3 AND o.prompt_number = $4 AND o.job_type = 'observations'
      AND ((o.status = 'queued' AND o.next_attempt_at <= now() + interval '1 second')
           OR (o.status = 'processing' AND o.started_at > now() - interval '2 seconds'))
      AND NOT EXISTS (SELECT 1 FROM generation_jobs n WHERE n.session_id = $3 AND n.prompt_number = $4
                        AND n.job_type = 'observations' AND (n.created_at, n.id) > (o.created_at, o.id)))";

/// Whether a session summary should wait: a job of one of its turns is
/// still due or running, so a turn summary may be on its way.
const SESSION_WAITING_SQL: &str = "SELECT EXISTS (
    SELECT 1 FROM generation_jobs j
    WHERE j.project_id = $2 AND j.session_id = $3 AND j.id <> $1
      AND j.job_type IN ('observations', 'turn_summary') AND j.status IN ('queued', 'processing')
      AND j.next_attempt_at <= now() + $4 * interval '1 millisecond')";

/// Whether the job should wait still (`Wait::Turn` binds the turn's prompt
/// number as `fourth`, `Wait::Session` the grace in milliseconds).
#[tracing::instrument(skip(pool), err)]
pub async fn waiting(
    pool: &PgPool,
    wait: Wait,
    job_id: Uuid,
    project_id: Uuid,
    session_id: Uuid,
    fourth: i64,
) -> sqlx::Result<bool> {
    let sql = match wait {
        Wait::Turn => TURN_WAITING_SQL,
        Wait::Session => SESSION_WAITING_SQL,
    };
    sqlx::query_scalar(sql)
        .bind(job_id)
        .bind(project_id)
        .bind(session_id)
        .bind(fourth)
        .fetch_one(pool)
        .await
}

/// The stored summaries of the session's turns, oldest turn first.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
pub async fn turn_summaries(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Vec<TurnSummary>> {
    sqlx::query_as(
        "SELECT DISTINCT ON (prompt_number) prompt_number, request, investigated, learned, completed,
                next_steps, notes
         FROM summaries
         WHERE project_id = $1 AND session_id = $2 AND scope = 'turn' AND prompt_number IS NOT NULL
         ORDER BY prompt_number, created_at DESC",
    )
    .bind(job.project_id)
    .bind(job.session_id)
    .fetch_all(pool)
    .await
}

/// The job's material with `events` (at most `limit` where the query has
/// a limit), and the turn_summary job it took, if any (an observation job
/// that writes its turn's summary: its events then include the turn's Stop).
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
pub async fn load(
    pool: &PgPool,
    job: &ClaimedJob,
    events: Events,
    limit: i64,
) -> sqlx::Result<(Material, Option<Uuid>)> {
    let sql = match events {
        Events::Own => OBSERVATIONS_SQL,
        Events::Taking => TAKING_SQL,
        Events::Turn => TURN_SQL,
        Events::Session => SESSION_SQL,
    };
    let row: MaterialRow = sqlx::query_as(sql)
        .bind(job.project_id)
        .bind(job.id)
        .bind(job.session_id)
        .bind(job.prompt_number)
        .bind(limit)
        .fetch_one(pool)
        .await?;
    let material = Material {
        job_id: job.id,
        job_type: job.job_type,
        project: row.project,
        agent: row.agent,
        cwd: row.cwd,
        prompt_number: job.prompt_number,
        events: row
            .events
            .0
            .into_iter()
            .map(|r| EventRecord {
                event_type: r.event_type,
                tool_name: r.tool_name,
                prompt_number: r.prompt_number,
                payload: r.payload,
                occurred_at: r.occurred_at,
            })
            .collect(),
    };
    Ok((material, row.turn_job))
}
