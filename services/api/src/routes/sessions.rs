//! claude-mem's session routes: start (idempotent on the agent's ids), read, end.

use axum::{extract::State, http::StatusCode};
use cairn_core::sessions::end;
use cairn_shared::auth::Scope;
use cairn_wakeup::Transport;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::{JobSummaryDto, SessionDto},
    error::{ApiError, ApiResult},
    extract::{Json, Path},
    ingest::{self, EventKind, IncomingEvent, SessionTarget, idempotency_key_from_body},
    state::AppState,
    store::sessions::{self, SessionChange, SessionKey},
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartSession {
    /// Project id or slug.
    pub project_id: String,
    pub external_session_id: Option<String>,
    pub content_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// The agent (`claude-code`, `cursor`, …); part of the session's identity.
    pub platform_source: Option<String>,
    /// `metadata.prompt`, when present, is the user prompt that opens a turn.
    pub metadata: Option<serde_json::Value>,
}

#[derive(Serialize, ToSchema)]
pub struct SessionResponse {
    pub session: SessionDto,
}

/// Start a session, or return the existing one for the same ids.
#[utoipa::path(post, path = "/v1/sessions/start", tag = "sessions", request_body = StartSession,
    responses((status = 201, body = SessionResponse, description = "Created"),
              (status = 200, body = SessionResponse, description = "Already existed")),
    security(("bearer" = [])))]
pub async fn start_session(
    State(state): State<AppState>,
    auth: Auth,
    Json(body): Json<StartSession>,
) -> ApiResult<(StatusCode, Json<SessionResponse>)> {
    auth.require(Scope::Ingest)?;
    let project = auth.project(&state, Some(&body.project_id)).await?;
    let external = body
        .external_session_id
        .clone()
        .or_else(|| body.content_session_id.clone())
        .unwrap_or_else(|| Uuid::now_v7().to_string());
    if external.is_empty() || external.len() > 256 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "session ids must be 1 to 256 characters",
        ));
    }
    let agent = body
        .platform_source
        .clone()
        .unwrap_or_else(|| "claude-code".into());
    let prompt = body
        .metadata
        .as_ref()
        .and_then(|m| m.get("prompt"))
        .and_then(|p| p.as_str())
        .map(str::to_string);
    let mut metadata = body.metadata.clone().unwrap_or_else(|| serde_json::json!({}));
    if let Some(m) = metadata.as_object_mut() {
        // The prompt is stored as the turn's event, filtered, not in session metadata.
        m.remove("prompt");
    }
    state.privacy.filter_value(&mut metadata);
    let key = SessionKey {
        agent: agent.clone(),
        external_session_id: external.clone(),
        content_session_id: body.content_session_id.clone().or(Some(external.clone())),
        agent_id: body.agent_id.clone(),
        agent_type: body.agent_type.clone(),
        platform_source: Some(agent.clone()),
        metadata: Some(metadata),
        actor: auth.actor(),
        ..Default::default()
    };
    let mut conn = state.pool.acquire().await?;
    let (mut session, created) = sessions::upsert(&mut conn, project, &key, SessionChange::Open).await?;
    drop(conn);

    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        let hash = idempotency_key_from_body("prompt", prompt.as_bytes());
        // Stop re-sends `start`; the same prompt again is the same turn.
        if session.last_prompt_hash.as_deref() != Some(hash.as_str()) {
            let event = IncomingEvent {
                source_adapter: "api".into(),
                source_type: "hook".into(),
                event_type: "user_prompt".into(),
                kind: EventKind::UserPrompt,
                session: SessionTarget::Agent(SessionKey {
                    prompt_hash: Some(hash.clone()),
                    ..key
                }),
                platform_source: Some(agent),
                source_event_id: None,
                idempotency_key: format!("prompt:{}:{}:{hash}", session.id, session.prompt_counter + 1),
                key_per_turn: false,
                tool_name: None,
                prompt: Some(prompt.clone()),
                payload: serde_json::json!({ "prompt": prompt }),
                metadata: serde_json::json!({}),
                occurred_at: chrono::Utc::now(),
                generate: true,
                seal_now: false,
                actor: auth.actor(),
            };
            ingest::ingest_one(&state, project, event).await?;
            session = sessions::get(&state.pool, project.team_id, Some(project.id), session.id)
                .await?
                .unwrap_or(session);
        }
    }
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(SessionResponse {
            session: session.into(),
        }),
    ))
}

/// Read a session.
#[utoipa::path(get, path = "/v1/sessions/{id}", tag = "sessions", params(("id" = Uuid, Path)),
    responses((status = 200, body = SessionResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_session(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<SessionResponse>> {
    auth.require(Scope::Read)?;
    let session = sessions::get(&state.pool, auth.team_id, auth.project_filter(), id)
        .await?
        .ok_or_else(|| ApiError::not_found("session_not_found", "no such session"))?;
    Ok(Json(SessionResponse {
        session: session.into(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndSessionResponse {
    pub session: SessionDto,
    pub generation_job: Option<JobSummaryDto>,
}

/// End the current turn (claude-mem calls this at every Stop) and mark the
/// session ended; a later start reopens it. Idempotent per turn.
#[utoipa::path(post, path = "/v1/sessions/{id}/end", tag = "sessions", params(("id" = Uuid, Path)),
    responses((status = 200, body = EndSessionResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn end_session(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<EndSessionResponse>> {
    auth.require(Scope::Ingest)?;
    // A token that may not read sessions ends only those it (or its member) opened.
    let existing = sessions::get(&state.pool, auth.team_id, auth.project_filter(), id)
        .await?
        .filter(|s| auth.may_read() || s.opened_by(auth.actor()))
        .ok_or_else(|| ApiError::not_found("session_not_found", "no such session"))?;
    let project = crate::auth::ProjectRef {
        team_id: existing.team_id,
        id: existing.project_id,
    };
    let turn = existing.prompt_counter;
    let mut tx = state.pool.begin().await?;
    let private = existing.private_prompt_number == Some(turn);
    let ended = end::end_turn(&mut tx, project, id, turn, None, turn > 0 && !private).await?;
    let (job, due) = (ended.summary, ended.due);
    sessions::close_turn_prompt(&mut *tx, id).await?;
    let session = sessions::mark_ended(&mut *tx, id).await?;
    tx.commit().await?;
    let transport = ingest::publish(&state, &due, job.as_ref().map(|j| j.id)).await;
    Ok(Json(EndSessionResponse {
        session: session.into(),
        generation_job: job
            .map(|j| JobSummaryDto::new(&j, if j.is_due() { transport } else { Transport::Skipped })),
    }))
}
