//! `job::load::material` loads, in one query, what the three queries it
//! replaced loaded: the same project, agent, cwd and events in the same
//! order, for every job type, and for a job whose session or project is gone.

use cairn_generator::{job::load, material::Material};
use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use cairn_testkit::{cc, spawn_app};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use super::support::post_turn;

/// The three loads as they were before they were merged.
async fn three_queries(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Material> {
    type Row = (
        String,
        Option<String>,
        Option<i32>,
        serde_json::Value,
        DateTime<Utc>,
    );
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
    let job_type = load::job_type(job);
    let cols = "event_type, tool_name, prompt_number, payload, occurred_at";
    let mut rows: Vec<Row> = match job.job_type.as_str() {
        "observations" => sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {cols} FROM agent_events WHERE project_id = $1 AND (job_id = $2
                OR (session_id = $3 AND prompt_number = $4 AND job_id IS NULL AND payload ? 'prompt'))
             ORDER BY occurred_at, id"
        ))),
        "turn_summary" => sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {cols} FROM agent_events WHERE project_id = $1 AND session_id = $3
               AND prompt_number = $4 AND $2::uuid IS NOT NULL ORDER BY occurred_at, id LIMIT 2000"
        ))),
        _ => sqlx::query_as(
            "SELECT event_type, tool_name, prompt_number, payload - 'tool_response', occurred_at
             FROM agent_events WHERE project_id = $1 AND session_id = $3
               AND $2::uuid IS NOT NULL AND $4::integer IS NOT DISTINCT FROM $4
             ORDER BY occurred_at DESC, id DESC LIMIT 3000",
        ),
    }
    .bind(job.project_id)
    .bind(job.id)
    .bind(job.session_id)
    .bind(job.prompt_number)
    .fetch_all(pool)
    .await?;
    if job.job_type == JobType::SessionSummary {
        rows.reverse();
    }
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
            .map(|(event_type, tool_name, prompt_number, payload, occurred_at)| {
                cairn_generator::material::EventRecord {
                    event_type,
                    tool_name,
                    prompt_number,
                    payload,
                    occurred_at,
                }
            })
            .collect(),
    })
}

fn claimed(row: (Uuid, Uuid, Uuid, Option<Uuid>, JobType, Option<i32>)) -> ClaimedJob {
    let (id, team_id, project_id, session_id, job_type, prompt_number) = row;
    ClaimedJob {
        id,
        team_id,
        project_id,
        session_id,
        job_type,
        prompt_number,
        attempts: 1,
        max_attempts: 3,
        lease_expires_at: Utc::now(),
        traceparent: None,
    }
}

#[tokio::test]
async fn one_query_loads_what_three_did() {
    let app = spawn_app().await;
    post_turn(&app, "s-load", "fix the parser").await;
    post_turn(&app, "s-load", "and the lexer").await;
    let (status, res) = app
        .hook(cc("s-load", "SessionEnd", json!({ "reason": "exit" })))
        .await;
    assert_eq!(status, 200, "{res}");

    let jobs: Vec<_> = sqlx::query_as(
        "SELECT id, team_id, project_id, session_id, job_type, prompt_number FROM generation_jobs
         WHERE project_id = $1 ORDER BY created_at, id",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let mut jobs: Vec<ClaimedJob> = jobs.into_iter().map(claimed).collect();
    let kinds: Vec<&str> = jobs.iter().map(|j| j.job_type.as_str()).collect();
    for kind in ["observations", "turn_summary", "session_summary"] {
        assert!(kinds.contains(&kind), "no {kind} job in {kinds:?}");
    }
    // A job whose session is gone, and one whose project is.
    let mut orphan = claimed((
        Uuid::new_v4(),
        jobs[0].team_id,
        app.project_id,
        Some(Uuid::new_v4()),
        JobType::TurnSummary,
        Some(1),
    ));
    jobs.push(orphan.clone());
    orphan.job_type = JobType::SessionSummary;
    jobs.push(orphan.clone());

    for job in &jobs {
        let merged = load::material(&app.pool, job).await.unwrap();
        let before = three_queries(&app.pool, job).await.unwrap();
        assert_eq!(format!("{merged:?}"), format!("{before:?}"), "{}", job.job_type);
        if job.session_id == orphan.session_id {
            assert!(merged.agent.is_none() && merged.events.is_empty());
        } else {
            assert!(!merged.events.is_empty(), "{}", job.job_type);
        }
    }

    orphan.project_id = Uuid::new_v4();
    assert!(load::material(&app.pool, &orphan).await.is_err());
    assert!(three_queries(&app.pool, &orphan).await.is_err());
}
