//! `POST /v1/memories/{id}/feedback`: an agent or a person marks a memory
//! given back as helpful or misleading. It moves the memory's ranking for
//! its project (a factor in the retrieval engine: each helpful mark +10 %,
//! each misleading one −25 %, within ×0.25..×1.5), and is audited.
//! `GET` on the same path gives the counts and the newest marks (the
//! dashboard's observation page shows them).

use axum::{
    Json,
    extract::{Path, State},
};
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    state::AppState,
    store::feedback,
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeedbackInput {
    /// `helpful` or `misleading`.
    pub verdict: String,
    /// Why, in a few words (at most 1,000 characters).
    pub note: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackResponse {
    pub id: Uuid,
    pub verdict: String,
    pub helpful: i32,
    pub misleading: i32,
}

/// Mark a memory helpful or misleading (any scope that reads or writes memory).
#[utoipa::path(post, path = "/v1/memories/{id}/feedback", tag = "memories", params(("id" = Uuid, Path)),
    request_body = FeedbackInput,
    responses((status = 200, body = FeedbackResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn give_feedback(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Json(input): Json<FeedbackInput>,
) -> ApiResult<Json<FeedbackResponse>> {
    record(
        &state,
        &auth,
        id,
        &input.verdict,
        input.note.as_deref().unwrap_or_default(),
    )
    .await
    .map(Json)
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackList {
    pub id: Uuid,
    pub helpful: i32,
    pub misleading: i32,
    /// The newest marks first, at most 50.
    pub marks: Vec<feedback::Mark>,
}

/// A memory's feedback: its counts and newest marks (any scope that reads
/// or writes memory).
#[utoipa::path(get, path = "/v1/memories/{id}/feedback", tag = "memories", params(("id" = Uuid, Path)),
    responses((status = 200, body = FeedbackList), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn feedback_of(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<FeedbackList>> {
    if auth.require(Scope::Read).is_err() {
        auth.require(Scope::Ingest)?;
    }
    let mut conn = state.pool.acquire().await?;
    let (counts, marks) = feedback::of(&mut conn, auth.team_id, auth.project_id, auth.viewer(), id)
        .await?
        .ok_or_else(|| ApiError::not_found("observation_not_found", "no such memory in your projects"))?;
    Ok(Json(FeedbackList {
        id,
        helpful: counts.helpful,
        misleading: counts.misleading,
        marks,
    }))
}

/// Shared by the route and the MCP tool.
pub async fn record(
    state: &AppState,
    auth: &Auth,
    id: Uuid,
    verdict: &str,
    note: &str,
) -> ApiResult<FeedbackResponse> {
    if auth.require(Scope::Read).is_err() {
        auth.require(Scope::Ingest)?;
    }
    let helpful = match verdict.trim() {
        "helpful" => true,
        "misleading" => false,
        _ => {
            return Err(ApiError::unprocessable(
                "invalid_field",
                "`verdict` is `helpful` or `misleading`",
            ));
        }
    };
    if note.chars().count() > 1_000 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`note` is over 1,000 characters",
        ));
    }
    let (note, _) = state.privacy.filter_text(note);
    let mut tx = state.pool.begin().await?;
    let counts = feedback::record(
        &mut tx,
        auth.team_id,
        auth.project_id,
        auth.viewer(),
        id,
        helpful,
        &note,
        auth.token_id,
    )
    .await?
    .ok_or_else(|| ApiError::not_found("observation_not_found", "no such memory in your projects"))?;
    crate::routes::admin::record(
        &mut *tx,
        auth,
        crate::routes::admin::Target {
            team_id: auth.team_id,
            project_id: Some(counts.project_id),
            kind: "observation",
            id,
        },
        "memory.feedback",
        serde_json::json!({ "verdict": verdict.trim(), "note": note }),
    )
    .await?;
    tx.commit().await?;
    Ok(FeedbackResponse {
        id,
        verdict: verdict.trim().to_string(),
        helpful: counts.helpful,
        misleading: counts.misleading,
    })
}
