//! `DELETE /v1/projects/{projectId}/memory`: purge everything agents posted
//! to a project and everything generated from it (audited).

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::Serialize;
use utoipa::ToSchema;

use crate::{
    auth::Auth,
    error::ApiResult,
    extract::{Json, Path},
    state::AppState,
    store::purge,
};

#[derive(Serialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PurgeCounts {
    pub observations: u64,
    pub summaries: u64,
    pub events: u64,
    pub jobs: u64,
    pub sessions: u64,
}

/// Purge a project's memory: observations, summaries, events, jobs and sessions.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/memory", tag = "projects",
    params(("projectId" = String, Path, description = "Project id or slug")),
    responses((status = 200, body = PurgeCounts), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn purge_project_memory(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
) -> ApiResult<Json<PurgeCounts>> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&project_id)).await?;
    let mut tx = state.pool.begin().await?;
    let purged = purge::project_memory(&mut tx, project.id).await?;
    let counts = PurgeCounts {
        observations: purged.observations,
        summaries: purged.summaries,
        events: purged.events,
        jobs: purged.jobs,
        sessions: purged.sessions,
    };
    crate::routes::admin::record(
        &mut *tx,
        &auth,
        crate::routes::admin::Target {
            team_id: project.team_id,
            project_id: Some(project.id),
            kind: "project",
            id: project.id,
        },
        "project.purge_memory",
        serde_json::to_value(&counts).unwrap_or_default(),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(counts))
}
