//! Manual memories: observations written by hand, and their deletion.

use axum::{extract::State, http::StatusCode};
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::ObservationDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path},
    state::AppState,
    store::{
        observations::{self, NewMemory},
        sessions,
    },
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewMemoryInput {
    pub project_id: String,
    pub server_session_id: Option<Uuid>,
    /// The observation type (`discovery`, `decision`, …); default `note`.
    pub kind: Option<String>,
    pub content: String,
    pub metadata: Option<serde_json::Value>,
}

#[derive(Serialize, ToSchema)]
pub struct MemoryResponse {
    pub memory: ObservationDto,
}

const MAX_MEMORY_BYTES: usize = 64 * 1024;

/// Write a memory by hand; it is filtered for privacy like any event.
#[utoipa::path(post, path = "/v1/memories", tag = "memories", request_body = NewMemoryInput,
    responses((status = 201, body = MemoryResponse), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_memory(
    State(state): State<AppState>,
    auth: Auth,
    Json(input): Json<NewMemoryInput>,
) -> ApiResult<(StatusCode, Json<MemoryResponse>)> {
    auth.require(Scope::Ingest)?;
    let project = auth.project(&state, Some(&input.project_id)).await?;
    if input.content.len() > MAX_MEMORY_BYTES {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`content` is over 64 KiB",
        ));
    }
    let (content, _) = state.privacy.filter_text(&input.content);
    if content.trim().is_empty() {
        return Err(ApiError::unprocessable(
            "empty_content",
            "`content` is empty (after removing private parts)",
        ));
    }
    let kind = input
        .kind
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .unwrap_or("note");
    if kind.len() > 64 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`kind` is longer than 64 characters",
        ));
    }
    if let Some(id) = input.server_session_id {
        sessions::get(&state.pool, project.team_id, Some(project.id), id)
            .await?
            .ok_or_else(|| ApiError::not_found("session_not_found", "no such session in this project"))?;
    }
    let mut metadata = input.metadata.unwrap_or_else(|| serde_json::json!({}));
    state.privacy.filter_value(&mut metadata);
    let title: String = content
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(120)
        .collect();
    // Embedded before the write, stored with it: found by meaning at once,
    // not after the generator's backfill. No model, or a failure (logged):
    // written without, and the backfill embeds it later.
    let vector = match &state.embedder {
        Some(embedder) => {
            let text = cairn_core::generation::embed::observation_text(&title, "", &[], &content);
            match embedder.embed_one(&text).await {
                Ok(v) => Some((cairn_core::generation::embed::made(embedder), v)),
                Err(e) => {
                    tracing::warn!(error = %e, "memory not embedded now: the backfill will");
                    None
                }
            }
        }
        None => None,
    };
    let mut tx = state.pool.begin().await?;
    let row = observations::insert_manual(
        &mut *tx,
        NewMemory {
            project,
            author_token_id: auth.token_id,
            session_id: input.server_session_id,
            kind,
            title: &title,
            content: &content,
            metadata: &metadata,
        },
    )
    .await?;
    if let Some((made, vector)) = &vector {
        let target = cairn_core::generation::embed::Target::Observation(row.id);
        cairn_core::generation::embed::store(&mut tx, row.project_id, target, *made, vector).await?;
    }
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(MemoryResponse { memory: row.into() })))
}

#[derive(Serialize, ToSchema)]
pub struct Deleted {
    pub deleted: bool,
    pub id: Uuid,
}

/// Delete a memory (audited): any observation of the caller's projects with
/// `admin`; without it, only a manual memory the same token wrote.
#[utoipa::path(delete, path = "/v1/memories/{id}", tag = "memories", params(("id" = Uuid, Path)),
    responses((status = 200, body = Deleted), (status = 403, body = crate::error::ErrorBody),
              (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn delete_memory(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<Deleted>> {
    let mut tx = state.pool.begin().await?;
    let target = lock_to_change(&mut tx, &auth, id, "deleting").await?;
    observations::delete(&mut *tx, target.project_id, id).await?;
    crate::routes::admin::record(
        &mut *tx,
        &auth,
        crate::routes::admin::Target {
            team_id: auth.team_id,
            project_id: Some(target.project_id),
            kind: "observation",
            id,
        },
        "memory.delete",
        serde_json::json!({ "origin": target.origin, "kind": target.kind, "title": target.title }),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(Deleted { deleted: true, id }))
}

/// Locks memory `id` for a change (`doing`: "deleting", "editing"): with
/// `ingest` or `admin`, among the caller's projects; without `admin`, only a
/// manual memory this same token wrote.
pub(crate) async fn lock_to_change(
    tx: &mut sqlx::PgConnection,
    auth: &Auth,
    id: Uuid,
    doing: &str,
) -> ApiResult<observations::DeletionTarget> {
    auth.require(Scope::Ingest)
        .or_else(|_| auth.require(Scope::Admin))?;
    let target = observations::lock_for_deletion(&mut *tx, auth.team_id, auth.project_filter(), id)
        .await?
        .ok_or_else(|| ApiError::not_found("memory_not_found", "no such memory"))?;
    let own_manual = target.origin == "manual" && target.author_token_id == Some(auth.token_id);
    if !own_manual {
        auth.require(Scope::Admin).map_err(|_| {
            ApiError::forbidden(
                "insufficient_scope",
                format!("{doing} a memory needs the `admin` scope, unless this token wrote it by hand"),
            )
        })?;
    }
    Ok(target)
}
