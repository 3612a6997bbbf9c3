//! Loads a claimed job's material: the project, the session and the
//! job's events, chosen by job type (see `Material::events`).

use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};

use crate::material::{EventRecord, Material};

/// A session summary reads at most this many events (the newest).
const SESSION_EVENT_LIMIT: i64 = 3_000;
/// A turn summary reads at most this many events (the first).
const TURN_EVENT_LIMIT: i64 = 2_000;

#[derive(FromRow)]
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
    let (project,): (String,) = sqlx::query_as("SELECT name FROM projects WHERE id = $1")
        .bind(job.project_id)
        .fetch_one(pool)
        .await?;
    let session: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT agent, cwd FROM sessions WHERE id = $1 AND project_id = $2")
            .bind(job.session_id)
            .bind(job.project_id)
            .fetch_optional(pool)
            .await?;
    let job_type = job_type(job);
    let rows = events(pool, job, job_type).await?;
    let (agent, cwd) = session.map_or((None, None), |(a, c)| (Some(a), c));
    Ok(Material {
        job_id: job.id,
        job_type,
        project,
        agent,
        cwd,
        prompt_number: job.prompt_number,
        events: rows
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

async fn events(pool: &PgPool, job: &ClaimedJob, job_type: JobType) -> sqlx::Result<Vec<EventRow>> {
    match job_type {
        // The job's own events, and the prompt that opened its turn.
        JobType::Observations => {
            sqlx::query_as(
                "SELECT event_type, tool_name, prompt_number, payload, occurred_at FROM agent_events
                 WHERE project_id = $1 AND (job_id = $2
                    OR (session_id = $3 AND prompt_number = $4 AND job_id IS NULL AND payload ? 'prompt'))
                 ORDER BY occurred_at, id",
            )
            .bind(job.project_id)
            .bind(job.id)
            .bind(job.session_id)
            .bind(job.prompt_number)
            .fetch_all(pool)
            .await
        }
        JobType::TurnSummary => {
            sqlx::query_as(
                "SELECT event_type, tool_name, prompt_number, payload, occurred_at FROM agent_events
                 WHERE project_id = $1 AND session_id = $2 AND prompt_number = $3
                 ORDER BY occurred_at, id LIMIT $4",
            )
            .bind(job.project_id)
            .bind(job.session_id)
            .bind(job.prompt_number)
            .bind(TURN_EVENT_LIMIT)
            .fetch_all(pool)
            .await
        }
        // Tool responses are left out: a session digest needs what was done, not its output.
        JobType::SessionSummary => {
            let mut rows: Vec<EventRow> = sqlx::query_as(
                "SELECT event_type, tool_name, prompt_number, payload - 'tool_response' AS payload, occurred_at
                 FROM agent_events WHERE project_id = $1 AND session_id = $2
                 ORDER BY occurred_at DESC, id DESC LIMIT $3",
            )
            .bind(job.project_id)
            .bind(job.session_id)
            .bind(SESSION_EVENT_LIMIT)
            .fetch_all(pool)
            .await?;
            rows.reverse();
            Ok(rows)
        }
    }
}
