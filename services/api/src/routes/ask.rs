//! `POST /v1/ask`: a question answered from the project's memories (`crate::ask`).

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::{
    ask::{self, Answer},
    auth::Auth,
    error::ApiResult,
    extract::Json,
    state::AppState,
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskInput {
    /// The question, 1 to 2,000 characters.
    pub question: String,
    /// Memories to answer from, 1..=20 (default 8).
    pub limit: Option<i64>,
    /// Project id or slug; a project token's own project when absent.
    #[serde(alias = "projectId")]
    pub project: Option<String>,
}

/// Ask the project's memory a question (read).
///
/// The question is searched like any query; a configured model answers
/// from the best memories only, citing their ids, and says when memory does
/// not know. Without a model (the `heuristic` provider), with the project's
/// daily token budget spent, or when the model fails or passes
/// `CAIRN_ASK_DEADLINE_MS`, the answer is the best memories themselves
/// (`answeredBy: memories`, and `fallback` says why). A model's tokens count
/// against the project's daily budget.
#[utoipa::path(post, path = "/v1/ask", tag = "memory", request_body = AskInput,
    responses((status = 200, description = "The answer", body = Answer),
              (status = 404, description = "No such project (`project_not_found`)", body = crate::error::ErrorBody),
              (status = 422, description = "An empty or too long question, `limit` out of range (`invalid_field`)",
               body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_ask(
    State(state): State<AppState>,
    auth: Auth,
    Json(input): Json<AskInput>,
) -> ApiResult<Json<Answer>> {
    auth.require(Scope::Read)?;
    let project = auth.project(&state, input.project.as_deref()).await?;
    let limit = input.limit.unwrap_or(ask::DEFAULT_LIMIT);
    let answer = ask::ask(
        &state,
        project.team_id,
        project.id,
        &input.question,
        limit,
        auth.viewer(),
    )
    .await?;
    Ok(Json(answer))
}
