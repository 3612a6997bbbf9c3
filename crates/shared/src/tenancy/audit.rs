//! The audit log: one row per administrative change.

use sqlx::PgExecutor;
use uuid::Uuid;

pub struct AuditEntry<'a> {
    pub team_id: Option<Uuid>,
    pub actor_token_id: Option<Uuid>,
    pub action: &'a str,
    pub target_type: &'a str,
    pub target_id: Option<String>,
    pub detail: serde_json::Value,
    pub request_id: Option<&'a str>,
}

pub async fn record(db: impl PgExecutor<'_>, entry: AuditEntry<'_>) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO audit_log (team_id, actor_token_id, action, target_type, target_id, detail, request_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(entry.team_id)
    .bind(entry.actor_token_id)
    .bind(entry.action)
    .bind(entry.target_type)
    .bind(entry.target_id)
    .bind(entry.detail)
    .bind(entry.request_id)
    .execute(db)
    .await?;
    Ok(())
}
