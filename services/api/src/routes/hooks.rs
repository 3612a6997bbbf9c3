//! `POST /v1/hooks/{agent}`: agents' native hooks post here and get their
//! native hook answer back.

use axum::{extract::State, http::HeaderMap};
use cairn_shared::auth::Scope;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::{
    auth::Auth,
    context::{self, ContextRequest, Mode},
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query, RawBody},
    ingest::{self, claude_code},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
pub struct HookQuery {
    /// Project id or slug; needed with a team token, ignored with a project token
    /// of the same project.
    pub project: Option<String>,
}

/// Receive one agent hook event.
///
/// The body is the agent's own hook JSON (for `claude-code`: SessionStart,
/// UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop,
/// SubagentStop, PreCompact, SessionEnd, SubagentStart). The answer is in the
/// agent's hook output format: SessionStart gets the project's memory as
/// `additionalContext`.
#[utoipa::path(
    post,
    path = "/v1/hooks/{agent}",
    tag = "ingest",
    params(("agent" = String, Path, description = "Agent adapter: `claude-code`"), HookQuery),
    request_body(content = Object, description = "The agent's native hook input"),
    responses(
        (status = 200, description = "Hook output", body = Object),
        (status = 404, description = "Unknown agent (`unknown_agent`) or project", body = crate::error::ErrorBody),
        (status = 413, description = "Body over the limit", body = crate::error::ErrorBody),
        (status = 422, description = "Missing or mistyped field", body = crate::error::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn post_hook(
    State(state): State<AppState>,
    auth: Auth,
    Path(agent): Path<String>,
    Query(query): Query<HookQuery>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> ApiResult<Json<serde_json::Value>> {
    if agent != claude_code::AGENT {
        return Err(ApiError::not_found(
            "unknown_agent",
            format!("no adapter for agent `{agent}`; known: claude-code"),
        ));
    }
    auth.require(Scope::Ingest)?;
    let idempotency = headers.get("idempotency-key").and_then(|v| v.to_str().ok());
    let event = claude_code::parse(&body, idempotency)?;
    let project = auth.project(&state, query.project.as_deref()).await?;
    let hook = event.event_type.clone();
    let context = match hook.as_str() {
        "SessionStart" => {
            let source = event
                .payload
                .get("source")
                .and_then(|s| s.as_str())
                .map(str::to_string);
            ingest::ingest_one(&state, project, event).await?;
            let request = ContextRequest {
                project_id: project.id,
                query: None,
                budget_tokens: None,
                mode: Mode::for_source(source.as_deref()),
            };
            Some(context::build(&state.pool, &request).await?.selection.markdown)
        }
        // Related memories are looked up while the event is stored, within their deadline.
        "UserPromptSubmit" => {
            let (prompt, _) = state
                .privacy
                .filter_text(event.prompt.as_deref().unwrap_or_default());
            let related = context::prompt::related(
                &state.pool,
                project.id,
                &prompt,
                state.config.prompt_context_deadline,
            );
            let (stored, related) = tokio::join!(ingest::ingest_one(&state, project, event), related);
            stored?;
            related
        }
        _ => {
            ingest::ingest_one(&state, project, event).await?;
            None
        }
    };
    Ok(Json(claude_code::answer(&hook, context)))
}
