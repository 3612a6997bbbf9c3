//! `GET /v1/projects/{projectId}/memory-digest`: the project's most
//! important live memories as a few markdown lines, for `cairn sync` to
//! write into a marked section of CLAUDE.md, AGENTS.md or a Cursor rule.

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    context::markdown,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::memory_digest,
};

/// Lines the digest's list may have at most.
pub const MAX_LINES: i64 = 500;

#[derive(Deserialize, IntoParams)]
pub struct DigestQuery {
    /// Memories (list lines) at most: 1..=500 (default 30).
    pub lines: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDigest {
    pub project_id: Uuid,
    /// One markdown list line per memory, most important first.
    pub lines: Vec<String>,
    /// The observations shown, in the same order.
    pub observation_ids: Vec<Uuid>,
}

/// A project's most important live memories, one line each (read).
///
/// Live memories only (not stale, superseded, merged or archived), plans
/// left out; decisions and bug fixes first, then the most retrieved, then
/// the newest. Text is neutralised as in context: a memory cannot close the
/// section it is written into.
#[utoipa::path(get, path = "/v1/projects/{projectId}/memory-digest", tag = "projects",
    params(("projectId" = String, Path, description = "Project id or slug"), DigestQuery),
    responses((status = 200, description = "The digest", body = MemoryDigest),
              (status = 404, description = "No such project (`project_not_found`)", body = crate::error::ErrorBody),
              (status = 422, description = "`lines` out of range (`invalid_field`)", body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_memory_digest(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
    Query(q): Query<DigestQuery>,
) -> ApiResult<Json<MemoryDigest>> {
    auth.require(Scope::Read)?;
    let lines = q.lines.unwrap_or(30);
    if !(1..=MAX_LINES).contains(&lines) {
        return Err(ApiError::unprocessable("invalid_field", "`lines` is 1..=500"));
    }
    let project = auth.project(&state, Some(&project_id)).await?;
    let top = memory_digest::top(&state.pool, project.id, lines).await?;
    Ok(Json(MemoryDigest {
        project_id: project.id,
        lines: top.iter().map(markdown::digest_line).collect(),
        observation_ids: top.iter().map(|o| o.id).collect(),
    }))
}
