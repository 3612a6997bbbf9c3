//! Loads a claimed job's material in one round trip: the project's name,
//! the session's agent and working directory, and the job's events, chosen
//! by job type (see `Material::events`), aggregated into one JSON array.
//!
//! [`load`] also settles who writes a turn's summary (`summary_by` on the
//! turn's turn_summary job, migration 0011): the turn's last observation
//! job, when it starts after the Stop, takes it and makes one call for the
//! turn's observations and summary (its material then holds the turn's
//! prompt and Stop too); the turn_summary job then writes nothing. A
//! session summary also gets the summaries of its turns.

use std::time::{Duration, Instant};

use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sqlx::{PgPool, prelude::FromRow, types::Json};
use uuid::Uuid;

use crate::generation::material::{EventRecord, Material};
use crate::generation::prompt::TurnSummary;

/// How long a turn or session summary waits for the observation jobs of
/// its turn (or session) to start or finish, checking every `POLL`.
const GRACE: Duration = Duration::from_secs(3);
const SESSION_GRACE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(100);

/// A session summary reads at most this many events (the newest).
const SESSION_EVENT_LIMIT: i64 = 3_000;
/// A turn summary reads at most this many events (the first).
const TURN_EVENT_LIMIT: i64 = 2_000;

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

pub fn job_type(job: &ClaimedJob) -> JobType {
    job.job_type
}

/// A job's material and what its prompt is built with.
#[derive(Debug)]
pub struct Loaded {
    pub material: Material,
    /// An observation job that writes its turn's summary too.
    pub summarise_turn: bool,
    /// A turn_summary job whose summary another job writes: nothing to do.
    pub summary_elsewhere: bool,
    /// A session summary: its turns' summaries, by turn.
    pub turn_summaries: Vec<TurnSummary>,
}

/// The job's material, after settling who writes its turn's summary.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
pub async fn load(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Loaded> {
    let mut loaded = Loaded {
        material: Material {
            job_id: job.id,
            job_type: job_type(job),
            project: String::new(),
            agent: None,
            cwd: None,
            prompt_number: job.prompt_number,
            events: vec![],
        },
        summarise_turn: false,
        summary_elsewhere: false,
        turn_summaries: vec![],
    };
    match loaded.material.job_type {
        JobType::Observations => {
            let (material, turn_job) = material_of(pool, job, TAKING_SQL).await?;
            loaded.material = material;
            loaded.summarise_turn = turn_job.is_some();
            return Ok(loaded);
        }
        JobType::TurnSummary => {
            wait_while(pool, TURN_WAITING_SQL, job, GRACE).await?;
            let owner = own_turn_summary(pool, job).await?;
            loaded.summary_elsewhere = owner.is_some_and(|owner| owner != job.id);
        }
        JobType::SessionSummary => {
            wait_while(pool, SESSION_WAITING_SQL, job, SESSION_GRACE).await?;
            loaded.turn_summaries = turn_summaries(pool, job).await?;
        }
    }
    if loaded.summary_elsewhere {
        return Ok(loaded);
    }
    loaded.material = material(pool, job).await?;
    Ok(loaded)
}

/// A turn_summary job takes the writing of its own summary unless a job
/// took it first; returns the job that writes it.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
async fn own_turn_summary(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Option<Uuid>> {
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

/// Polls `sql` (bound: job, project, session, and the turn, or for a
/// session the grace in ms) every `POLL` until it answers false or `grace` passes.
async fn wait_while(pool: &PgPool, sql: &'static str, job: &ClaimedJob, grace: Duration) -> sqlx::Result<()> {
    let Some(session) = job.session_id else {
        return Ok(());
    };
    let fourth = match job.job_type {
        JobType::TurnSummary => job.prompt_number.map(i64::from).unwrap_or_default(),
        _ => grace.as_millis() as i64,
    };
    let until = Instant::now() + grace;
    loop {
        let waiting: bool = sqlx::query_scalar(sql)
            .bind(job.id)
            .bind(job.project_id)
            .bind(session)
            .bind(fourth)
            .fetch_one(pool)
            .await?;
        if !waiting || Instant::now() >= until {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The stored summaries of the session's turns, oldest turn first.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
async fn turn_summaries(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Vec<TurnSummary>> {
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

/// The job's material, taking nothing: an observation job's without its
/// turn's Stop.
pub async fn material(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Material> {
    let sql = match job_type(job) {
        JobType::Observations => OBSERVATIONS_SQL,
        JobType::TurnSummary => TURN_SQL,
        JobType::SessionSummary => SESSION_SQL,
    };
    Ok(material_of(pool, job, sql).await?.0)
}

/// The material `sql` loads, and the turn_summary job it took, if any (an
/// observation job that writes its turn's summary: its events then include
/// the turn's Stop).
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
async fn material_of(
    pool: &PgPool,
    job: &ClaimedJob,
    sql: &'static str,
) -> sqlx::Result<(Material, Option<Uuid>)> {
    let job_type = job_type(job);
    let limit = match job_type {
        JobType::Observations => 0,
        JobType::TurnSummary => TURN_EVENT_LIMIT,
        JobType::SessionSummary => SESSION_EVENT_LIMIT,
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
        job_type,
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
