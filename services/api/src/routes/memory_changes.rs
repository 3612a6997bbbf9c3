//! `GET /v1/projects/{projectId}/memory-changes` and
//! `POST /v1/projects/{projectId}/memory-changes/{changeId}/revert`: what
//! happened to the project's memories — staled, superseded, merged,
//! archived — and undoing it. Every such change is logged by whoever made
//! it (the generator's completion and upkeep); a revert is logged too.

use axum::extract::State;
use cairn_core::memory::{
    changes::{self, MemoryChange},
    lifecycle::revert::{self, Refused},
};
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
pub struct ChangesQuery {
    /// Only the changes of this observation (changed, or the newer one it was replaced by).
    pub observation: Option<Uuid>,
    /// At most this many, 1..=500 (default 100).
    pub limit: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryChanges {
    pub project_id: Uuid,
    /// Newest first.
    pub changes: Vec<MemoryChange>,
}

/// The project's memory changes, newest first (read).
#[utoipa::path(get, path = "/v1/projects/{projectId}/memory-changes", tag = "memories",
    params(("projectId" = String, Path, description = "Project id or slug"), ChangesQuery),
    responses((status = 200, description = "The changes", body = MemoryChanges),
              (status = 404, description = "No such project (`project_not_found`)", body = crate::error::ErrorBody),
              (status = 422, description = "`limit` out of range (`invalid_field`)", body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_memory_changes(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
    Query(q): Query<ChangesQuery>,
) -> ApiResult<Json<MemoryChanges>> {
    auth.require(Scope::Read)?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::unprocessable("invalid_field", "`limit` is 1..=500"));
    }
    let project = auth.project(&state, Some(&project_id)).await?;
    let changes = changes::list(&state.pool, project.id, q.observation, limit, auth.viewer()).await?;
    Ok(Json(MemoryChanges {
        project_id: project.id,
        changes,
    }))
}

/// Reverts a memory change (admin): the observation gets back the state it
/// had before, and a merge's kept observation stops citing it.
///
/// Refused with 409 when the change was already reverted or is itself a
/// revert (`not_revertible`), or when the observation has changed state
/// since (`state_changed`).
#[utoipa::path(post, path = "/v1/projects/{projectId}/memory-changes/{changeId}/revert", tag = "memories",
    params(("projectId" = String, Path, description = "Project id or slug"),
           ("changeId" = Uuid, Path, description = "The change to revert")),
    responses((status = 200, description = "The `restore` change now logged", body = MemoryChange),
              (status = 403, description = "The token lacks `admin` (`insufficient_scope`)", body = crate::error::ErrorBody),
              (status = 404, description = "No such project or change (`project_not_found`, `change_not_found`)", body = crate::error::ErrorBody),
              (status = 409, description = "`not_revertible` or `state_changed`", body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn revert_memory_change(
    State(state): State<AppState>,
    auth: Auth,
    Path((project_id, change_id)): Path<(String, Uuid)>,
) -> ApiResult<Json<MemoryChange>> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&project_id)).await?;
    let actor = format!("token:{}", auth.token_id);
    match revert::revert(&state.pool, project.id, change_id, &actor).await? {
        Ok(restored) => Ok(Json(restored)),
        Err(Refused::NotFound) => Err(ApiError::not_found(
            "change_not_found",
            "no such memory change in this project",
        )),
        Err(Refused::NotRevertible) => Err(ApiError::conflict(
            "not_revertible",
            "this change was already reverted, or is itself a revert",
        )),
        Err(Refused::StateChanged { found }) => Err(ApiError::conflict(
            "state_changed",
            format!(
                "the observation is `{}` now, no longer in the state this change left it in",
                found.as_str()
            ),
        )),
    }
}
