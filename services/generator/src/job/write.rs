//! The completion transaction: the job's observations or summary, each with
//! a generation key unique in the database, and `processing → completed`,
//! committed together. The transition goes first: a worker that lost its
//! claim is refused before it writes anything.

use cairn_shared::jobs::{
    JobType,
    state_machine::{self, ClaimedJob, Transition, TransitionError},
};
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::{
    embed::{self, Target, Vectors},
    parse::{Parsed, ParsedObservation, ParsedSummary},
    provider::Usage,
    publish::LiveNotice,
};

/// Writes the job's rows and completes it; returns what to announce.
pub async fn complete(
    pool: &PgPool,
    job: &ClaimedJob,
    job_type: JobType,
    worker: &str,
    parsed: &Parsed,
    usage: &Usage,
) -> Result<Vec<LiveNotice>, TransitionError> {
    complete_embedded(pool, None, job, job_type, worker, parsed, usage).await
}

/// [`complete`], each row written with its vector when `embedder` makes one
/// (computed before the transaction; a failure leaves the rows without).
pub async fn complete_embedded(
    pool: &PgPool,
    embedder: Option<&cairn_embed::Embedder>,
    job: &ClaimedJob,
    job_type: JobType,
    worker: &str,
    parsed: &Parsed,
    usage: &Usage,
) -> Result<Vec<LiveNotice>, TransitionError> {
    let vectors = embed::for_parsed(embedder, job.id, job_type, parsed).await;
    // A usage without a provider stands for no call: none is stored.
    let usage_json = (!usage.provider.is_empty()).then(|| serde_json::to_value(usage).unwrap_or_default());
    let mut tx = pool.begin().await?;
    state_machine::apply(
        &mut tx,
        job.project_id,
        job.id,
        Transition::Complete {
            worker,
            usage: usage_json.as_ref(),
        },
    )
    .await?;
    let mut notices = Vec::new();
    match job_type {
        JobType::Observations => {
            for (position, observation) in parsed.observations.iter().enumerate() {
                let id = insert_observation(&mut tx, job, position, observation, usage).await?;
                store_vector(
                    &mut tx,
                    job,
                    &vectors,
                    Target::Observation(id),
                    vectors.observation(position),
                )
                .await?;
                notices.push(notice("observation.created", id, job, &observation.title));
            }
            // The turn's last observation job also writes the turn's summary.
            if let Some(summary) = &parsed.summary {
                let by = parsed
                    .summary_by_heuristic
                    .then(crate::provider::heuristic::usage);
                let id = insert_summary(&mut tx, job, "turn", summary, by.as_ref().unwrap_or(usage)).await?;
                store_vector(
                    &mut tx,
                    job,
                    &vectors,
                    Target::Summary(id),
                    vectors.summary.as_deref(),
                )
                .await?;
                notices.push(notice("summary.created", id, job, &summary.request));
            }
        }
        JobType::TurnSummary | JobType::SessionSummary => {
            if let Some(summary) = &parsed.summary {
                let scope = if job_type == JobType::TurnSummary {
                    "turn"
                } else {
                    "session"
                };
                let id = insert_summary(&mut tx, job, scope, summary, usage).await?;
                store_vector(
                    &mut tx,
                    job,
                    &vectors,
                    Target::Summary(id),
                    vectors.summary.as_deref(),
                )
                .await?;
                notices.push(notice("summary.created", id, job, &summary.request));
            }
        }
    }
    tx.commit().await?;
    mark_session_generated(pool, job).await;
    Ok(notices)
}

async fn store_vector(
    tx: &mut PgConnection,
    job: &ClaimedJob,
    vectors: &Vectors,
    target: Target,
    vector: Option<&[f32]>,
) -> sqlx::Result<()> {
    match vector {
        Some(v) => embed::store(tx, job.project_id, target, &vectors.model, v).await,
        None => Ok(()),
    }
}

/// The heuristic's summary of a turn whose observation job took the turn's
/// summary and then failed for good, written with the failure.
pub async fn failed_turn_summary(
    conn: &mut PgConnection,
    job: &ClaimedJob,
    summary: &ParsedSummary,
) -> sqlx::Result<Uuid> {
    insert_summary(conn, job, "turn", summary, &crate::provider::heuristic::usage()).await
}

/// `sessions.last_generated_at`, after the commit and at most once a second:
/// inside the transaction it would serialise every job of a session on the
/// session's row lock. Best effort: it is informational.
async fn mark_session_generated(pool: &PgPool, job: &ClaimedJob) {
    let Some(session_id) = job.session_id else {
        return;
    };
    let marked = sqlx::query(
        "UPDATE sessions SET last_generated_at = now()
         WHERE id = $1 AND project_id = $2
           AND (last_generated_at IS NULL OR last_generated_at < now() - interval '1 second')",
    )
    .bind(session_id)
    .bind(job.project_id)
    .execute(pool)
    .await;
    if let Err(e) = marked {
        tracing::debug!(%session_id, error = %e, "last_generated_at not updated");
    }
}

fn notice(kind: &'static str, id: Uuid, job: &ClaimedJob, title: &str) -> LiveNotice {
    LiveNotice {
        kind,
        id,
        project_id: job.project_id,
        session_id: job.session_id,
        job_id: job.id,
        title: title.chars().take(200).collect(),
    }
}

/// `job:{id}:obs:{position}`: the same job and position can only ever make one row.
pub fn observation_key(job_id: Uuid, position: usize) -> String {
    format!("job:{job_id}:obs:{position}")
}

async fn insert_observation(
    conn: &mut PgConnection,
    job: &ClaimedJob,
    position: usize,
    o: &ParsedObservation,
    usage: &Usage,
) -> sqlx::Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, session_id, job_id, generation_key, origin, kind,
             title, subtitle, facts, narrative, concepts, files_read, files_modified, metadata, provider,
             model, prompt_number)
         VALUES ($1, $2, $3, $4, $5, $6, 'generated', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    )
    .bind(id)
    .bind(job.team_id)
    .bind(job.project_id)
    .bind(job.session_id)
    .bind(job.id)
    .bind(observation_key(job.id, position))
    .bind(&o.kind)
    .bind(&o.title)
    .bind(&o.subtitle)
    .bind(&o.facts)
    .bind(&o.narrative)
    .bind(&o.concepts)
    .bind(&o.files_read)
    .bind(&o.files_modified)
    .bind(provenance(usage))
    .bind(&usage.provider)
    .bind(&usage.model)
    .bind(job.prompt_number)
    .execute(conn)
    .await?;
    Ok(id)
}

async fn insert_summary(
    conn: &mut PgConnection,
    job: &ClaimedJob,
    scope: &str,
    s: &ParsedSummary,
    usage: &Usage,
) -> sqlx::Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO summaries (id, team_id, project_id, session_id, job_id, generation_key, scope, prompt_number,
             request, investigated, learned, completed, next_steps, notes, provider, model)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    )
    .bind(id)
    .bind(job.team_id)
    .bind(job.project_id)
    .bind(job.session_id)
    .bind(job.id)
    .bind(format!("job:{}:summary", job.id))
    .bind(scope)
    .bind(job.prompt_number)
    .bind(&s.request)
    .bind(&s.investigated)
    .bind(&s.learned)
    .bind(&s.completed)
    .bind(&s.next_steps)
    .bind(&s.notes)
    .bind(&usage.provider)
    .bind(&usage.model)
    .execute(conn)
    .await?;
    Ok(id)
}

/// Marks what the offline extractor wrote, so readers can tell it from a model's work.
fn provenance(usage: &Usage) -> serde_json::Value {
    json!({ "heuristic": usage.provider == "heuristic" })
}
