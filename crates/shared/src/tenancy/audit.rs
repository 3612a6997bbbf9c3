//! The audit log: one row per administrative change.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

pub struct AuditEntry<'a> {
    pub team_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
    pub actor_token_id: Option<Uuid>,
    pub action: &'a str,
    pub target_type: &'a str,
    pub target_id: Option<String>,
    pub detail: serde_json::Value,
    pub request_id: Option<&'a str>,
}

#[tracing::instrument(skip_all, fields(action = entry.action), err)]
pub async fn record(db: impl PgExecutor<'_>, entry: AuditEntry<'_>) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO audit_log (team_id, actor_token_id, action, target_type, target_id, detail, request_id, project_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(entry.team_id)
    .bind(entry.actor_token_id)
    .bind(entry.action)
    .bind(entry.target_type)
    .bind(entry.target_id)
    .bind(entry.detail)
    .bind(entry.request_id)
    .bind(entry.project_id)
    .execute(db)
    .await?;
    Ok(())
}

#[derive(Debug, FromRow)]
pub struct AuditRow {
    pub id: i64,
    pub project_id: Option<Uuid>,
    pub actor_token_id: Option<Uuid>,
    pub action: String,
    pub target_type: String,
    pub target_id: Option<String>,
    pub detail: serde_json::Value,
    pub request_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A team's entries, newest first; with `project_id`, only that project's.
#[tracing::instrument(skip(db), err)]
pub async fn list(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Option<Uuid>,
    limit: i64,
) -> sqlx::Result<Vec<AuditRow>> {
    sqlx::query_as(
        "SELECT id, project_id, actor_token_id, action, target_type, target_id, detail, request_id, created_at
         FROM audit_log WHERE team_id = $1 AND ($2::uuid IS NULL OR project_id = $2)
         ORDER BY id DESC LIMIT $3",
    )
    .bind(team_id)
    .bind(project_id)
    .bind(limit)
    .fetch_all(db)
    .await
}
