//! The context builder over HTTP: claude-mem's `POST /v1/context`, and
//! `GET /v1/projects/{id}/context` as JSON or as the agents' markdown.

use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    context::{self, ContextRequest, Mode},
    dto::ObservationDto,
    dto::context::ContextDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::observations,
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextInput {
    pub project_id: String,
    /// Words that make some observations more relevant than the newest.
    pub query: Option<String>,
    /// The observations listed in the answer, 1..=50 (default 20); the
    /// markdown is fitted to the project's token budget either way.
    pub limit: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct ContextResponse {
    /// The observations the context shows, most relevant first.
    pub observations: Vec<ObservationDto>,
    /// The markdown an agent gets at SessionStart.
    pub context: String,
}

/// The project's context (claude-mem's shape).
#[utoipa::path(post, path = "/v1/context", tag = "memory", request_body = ContextInput,
    responses((status = 200, body = ContextResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_context(
    State(state): State<AppState>,
    auth: Auth,
    Json(input): Json<ContextInput>,
) -> ApiResult<Json<ContextResponse>> {
    auth.require(Scope::Read)?;
    let limit = input.limit.unwrap_or(20);
    if !(1..=50).contains(&limit) {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`limit` must be between 1 and 50",
        ));
    }
    let project = auth.project(&state, Some(&input.project_id)).await?;
    let built = context::build(
        &state,
        &ContextRequest {
            project_id: project.id,
            query: input.query.as_deref(),
            budget_tokens: None,
            max_tokens: None,
            mode: Mode::Full,
            as_of: None,
            branch: None,
            changed: &[],
            viewer: auth.viewer(),
        },
    )
    .await?;
    let shown: Vec<Uuid> = built
        .selection
        .details
        .iter()
        .chain(&built.selection.plans)
        .chain(&built.selection.index)
        .map(|o| o.id)
        .take(limit as usize)
        .collect();
    let rows = observations::by_ids(&state.pool, project.id, &shown, auth.viewer()).await?;
    Ok(Json(ContextResponse {
        observations: rows.into_iter().map(Into::into).collect(),
        context: built.selection.markdown,
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ContextQuery {
    /// Words that make some observations more relevant than the newest.
    pub query: Option<String>,
    /// Token budget (200..=50000); default the project's (2,000 unless set).
    pub budget: Option<usize>,
    /// `full` (default) or `minimal` (what a resumed session gets).
    pub mode: Option<String>,
    /// `json` (default) or `markdown`.
    pub format: Option<String>,
    /// As of this commit (7 to 64 hex digits of an id the project's hooks
    /// reported): only memories written while it was the project's newest
    /// commit or before (until the hooks first reported a later one),
    /// in the states they had then.
    pub commit: Option<String>,
}

/// The project's context, fitted to its token budget: JSON, or the agents' markdown.
#[utoipa::path(get, path = "/v1/projects/{id}/context", tag = "memory",
    params(("id" = String, Path, description = "Project id or slug"), ContextQuery),
    responses((status = 200, description = "The project's memory: JSON, or Markdown with `format=markdown`",
                  content((ContextDto = "application/json"), (String = "text/markdown"))),
              (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_project_context(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Query(query): Query<ContextQuery>,
) -> ApiResult<Response> {
    auth.require(Scope::Read)?;
    let project = auth.project(&state, Some(&id)).await?;
    let mode = match query.mode.as_deref() {
        None | Some("full") => Mode::Full,
        Some("minimal") => Mode::Minimal,
        Some(other) => {
            return Err(ApiError::unprocessable(
                "invalid_field",
                format!("`mode` is `full` or `minimal`, not `{other}`"),
            ));
        }
    };
    if let Some(budget) = query.budget
        && !(context::MIN_BUDGET..=context::MAX_BUDGET).contains(&budget)
    {
        return Err(ApiError::unprocessable(
            "invalid_field",
            format!(
                "`budget` must be between {} and {}",
                context::MIN_BUDGET,
                context::MAX_BUDGET
            ),
        ));
    }
    let as_of = match query.commit.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(commit) => Some(crate::routes::search::as_of_commit(&state, project.id, commit).await?),
        None => None,
    };
    let built = context::build(
        &state,
        &ContextRequest {
            project_id: project.id,
            query: query.query.as_deref(),
            budget_tokens: query.budget,
            max_tokens: None,
            mode,
            as_of,
            branch: None,
            changed: &[],
            viewer: auth.viewer(),
        },
    )
    .await?;
    match query.format.as_deref() {
        None | Some("json") => Ok(Json(ContextDto::from(built)).into_response()),
        Some("markdown") => Ok((
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            built.selection.markdown,
        )
            .into_response()),
        Some(other) => Err(ApiError::unprocessable(
            "invalid_field",
            format!("`format` is `json` or `markdown`, not `{other}`"),
        )),
    }
}
