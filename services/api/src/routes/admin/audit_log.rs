//! Read the audit log of a team; a project-scoped admin reads only its
//! project's entries.

use axum::extract::State;
use cairn_shared::tenancy::audit::{self, AuditRow};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Query},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct AuditQuery {
    pub team_id: Option<Uuid>,
    /// At most 500; default 100.
    pub limit: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    pub id: i64,
    /// The project the change concerns, if any.
    pub project_id: Option<Uuid>,
    pub actor_token_id: Option<Uuid>,
    pub action: String,
    pub target_type: String,
    pub target_id: Option<String>,
    pub detail: serde_json::Value,
    pub request_id: Option<String>,
    pub created_at_epoch: i64,
}

impl From<AuditRow> for AuditEntryDto {
    fn from(r: AuditRow) -> Self {
        Self {
            id: r.id,
            project_id: r.project_id,
            actor_token_id: r.actor_token_id,
            action: r.action,
            target_type: r.target_type,
            target_id: r.target_id,
            detail: r.detail,
            request_id: r.request_id,
            created_at_epoch: r.created_at.timestamp_millis(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct AuditList {
    pub entries: Vec<AuditEntryDto>,
}

/// The team's audit log, newest first.
#[utoipa::path(get, path = "/v1/admin/audit", tag = "admin", params(AuditQuery),
    responses((status = 200, body = AuditList)), security(("bearer" = [])))]
pub async fn list_audit(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<AuditList>> {
    let team_id = super::acting_team(&auth, q.team_id)?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::bad_request("invalid_limit", "limit must be 1 to 500"));
    }
    let rows = audit::list(&state.pool, team_id, auth.project_filter(), limit).await?;
    Ok(Json(AuditList {
        entries: rows.into_iter().map(Into::into).collect(),
    }))
}
