//! The SQL the recall bench reads with: open and finished jobs, and the
//! stored observations and summaries of a session, as text.

use anyhow::Context;
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

/// Jobs still queued or processing.
#[tracing::instrument(skip(pool))]
pub async fn open_jobs(pool: &PgPool) -> anyhow::Result<i64> {
    sqlx::query_scalar("SELECT count(*) FROM generation_jobs WHERE status IN ('queued', 'processing')")
        .fetch_one(pool)
        .await
        .context("counting open jobs")
}

/// A finished job, with its session's external id.
#[derive(Clone, Debug, FromRow)]
pub struct JobRow {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub job_type: cairn_shared::jobs::JobType,
    pub prompt_number: Option<i32>,
    pub status: String,
    pub external_session_id: Option<String>,
}

/// Every job, oldest first.
#[tracing::instrument(skip(pool))]
pub async fn jobs(pool: &PgPool) -> anyhow::Result<Vec<JobRow>> {
    sqlx::query_as(
        "SELECT j.id, j.team_id, j.project_id, j.session_id, j.job_type, j.prompt_number, j.status,
                s.external_session_id
         FROM generation_jobs j LEFT JOIN sessions s ON s.id = j.session_id
         ORDER BY j.created_at, j.id",
    )
    .fetch_all(pool)
    .await
    .context("loading jobs")
}

/// The stored text of one session (by external id): each observation's
/// title, subtitle, facts and narrative, and each summary's fields.
#[tracing::instrument(skip(pool))]
pub async fn stored_texts(pool: &PgPool, external_session_id: &str) -> anyhow::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT concat_ws(E'\\n', o.title, o.subtitle, array_to_string(o.facts, E'\\n'), o.narrative)
         FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.external_session_id = $1
         UNION ALL
         SELECT concat_ws(E'\\n', m.request, m.investigated, m.learned, m.completed, m.next_steps)
         FROM summaries m JOIN sessions s ON s.id = m.session_id
         WHERE s.external_session_id = $1",
    )
    .bind(external_session_id)
    .fetch_all(pool)
    .await
    .context("loading stored memories")
}

/// Observations and summaries (without a vector, with one), or `None` on a
/// schema without embedding tables.
#[tracing::instrument(skip(pool))]
pub async fn vectors(pool: &PgPool) -> anyhow::Result<Option<(i64, i64)>> {
    let has_tables: bool = sqlx::query_scalar("SELECT to_regclass('observation_embeddings') IS NOT NULL")
        .fetch_one(pool)
        .await
        .context("looking for embedding tables")?;
    if !has_tables {
        return Ok(None);
    }
    sqlx::query_as(
        "SELECT (SELECT count(*) FROM observations o
                 WHERE NOT EXISTS (SELECT 1 FROM observation_embeddings e WHERE e.observation_id = o.id))
              + (SELECT count(*) FROM summaries s
                 WHERE NOT EXISTS (SELECT 1 FROM summary_embeddings e WHERE e.summary_id = s.id)),
                (SELECT count(*) FROM observation_embeddings) + (SELECT count(*) FROM summary_embeddings)",
    )
    .fetch_one(pool)
    .await
    .map(Some)
    .context("counting rows with and without vectors")
}
