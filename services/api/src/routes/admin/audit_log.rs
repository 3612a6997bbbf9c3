//! Read the audit log of a team.

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::prelude::FromRow;
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

#[derive(Serialize, ToSchema, FromRow)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    pub id: i64,
    pub actor_token_id: Option<Uuid>,
    pub action: String,
    pub target_type: String,
    pub target_id: Option<String>,
    pub detail: serde_json::Value,
    pub request_id: Option<String>,
    #[serde(skip)]
    pub created_at: DateTime<Utc>,
    #[sqlx(skip)]
    pub created_at_epoch: i64,
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
    let mut entries: Vec<AuditEntryDto> = sqlx::query_as(
        "SELECT id, actor_token_id, action, target_type, target_id, detail, request_id, created_at
         FROM audit_log WHERE team_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(team_id)
    .bind(limit)
    .fetch_all(&state.pool)
    .await?;
    for e in &mut entries {
        e.created_at_epoch = e.created_at.timestamp_millis();
    }
    Ok(Json(AuditList { entries }))
}
