//! The admin API: teams, projects, tokens and the audit log. Every change is
//! audited. `admin` manages the caller's team; `superadmin` every team.

pub mod audit_log;
pub mod members;
pub mod project_rules;
pub mod projects;
pub mod teams;
pub mod tokens;

use uuid::Uuid;

use crate::{auth::Auth, error::ApiError, request_id};
use cairn_shared::{
    auth::Scope,
    tenancy::audit::{self, AuditEntry},
};

/// The team an admin request acts on: the caller's own, or (superadmin) any.
pub fn acting_team(auth: &Auth, requested: Option<Uuid>) -> Result<Uuid, ApiError> {
    auth.require(Scope::Admin)?;
    match requested {
        Some(team) if team != auth.team_id => {
            if auth.scopes.contains(&Scope::Superadmin) {
                Ok(team)
            } else {
                Err(ApiError::not_found("team_not_found", "no such team"))
            }
        }
        _ => Ok(auth.team_id),
    }
}

/// `Some(None)` for an explicit `null`, so `null` can clear a setting.
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// A daily LLM token budget is a positive number of tokens, or null for none.
pub fn check_budget(budget: Option<Option<i64>>) -> Result<(), ApiError> {
    if budget.flatten().is_some_and(|b| b <= 0) {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`llmDailyTokenBudget` is a positive number of tokens, or null for none",
        ));
    }
    Ok(())
}

/// What an audit entry is about.
pub struct Target {
    pub team_id: Uuid,
    /// The project concerned, when there is one: project admins read only these.
    pub project_id: Option<Uuid>,
    pub kind: &'static str,
    pub id: Uuid,
}

/// Records an administrative change, in the caller's transaction.
pub async fn record(
    db: impl sqlx::PgExecutor<'_>,
    auth: &Auth,
    target: Target,
    action: &str,
    detail: serde_json::Value,
) -> sqlx::Result<()> {
    audit::record(
        db,
        AuditEntry {
            team_id: Some(target.team_id),
            project_id: target.project_id,
            actor_token_id: Some(auth.token_id),
            action,
            target_type: target.kind,
            target_id: Some(target.id.to_string()),
            detail,
            request_id: request_id::current().as_deref(),
        },
    )
    .await
}
