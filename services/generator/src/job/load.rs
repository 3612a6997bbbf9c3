//! Loads a claimed job's material in one round trip: the project's name,
//! the session's agent and working directory, and the job's events, chosen
//! by job type (see `Material::events`), aggregated into one JSON array.

use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sqlx::{PgPool, prelude::FromRow, types::Json};

use crate::material::{EventRecord, Material};

/// A session summary reads at most this many events (the newest).
const SESSION_EVENT_LIMIT: i64 = 3_000;
/// A turn summary reads at most this many events (the first).
const TURN_EVENT_LIMIT: i64 = 2_000;

/// One query per job type, bound alike: `$1` project, `$2` job, `$3`
/// session, `$4` prompt number, `$5` event limit (a query need not use them
/// all: sqlx sends every parameter's type). The events subquery (`e`) gives the
/// events' columns and `id`; they are aggregated in `(occurred_at, id)`
/// order. No project row, no row: the load fails as a missing project did.
/// No session row: agent and cwd are NULL.
macro_rules! material_sql {
    ($events:literal) => {
        concat!(
            "SELECT p.name AS project, s.agent, s.cwd,
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
    match job.job_type.as_str() {
        "turn_summary" => JobType::TurnSummary,
        "session_summary" => JobType::SessionSummary,
        _ => JobType::Observations,
    }
}

pub async fn material(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Material> {
    let job_type = job_type(job);
    let (sql, limit) = match job_type {
        JobType::Observations => (OBSERVATIONS_SQL, 0),
        JobType::TurnSummary => (TURN_SQL, TURN_EVENT_LIMIT),
        JobType::SessionSummary => (SESSION_SQL, SESSION_EVENT_LIMIT),
    };
    let row: MaterialRow = sqlx::query_as(sql)
        .bind(job.project_id)
        .bind(job.id)
        .bind(job.session_id)
        .bind(job.prompt_number)
        .bind(limit)
        .fetch_one(pool)
        .await?;
    Ok(Material {
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
    })
}
