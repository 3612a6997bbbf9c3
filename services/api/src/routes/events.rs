//! claude-mem's event routes: post one or a batch, read back an event and
//! the observations made from it.

use std::time::{Duration, Instant};

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
};
use cairn_shared::{auth::Scope, jobs::JobStatus, time::from_epoch_ms};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::{Auth, ProjectRef},
    dto::{EventDto, JobSummaryDto, ObservationDto},
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    ingest::{self, EventKind, IncomingEvent, Outcome, SessionTarget, Skipped},
    state::AppState,
    store::{events, observations},
};

#[derive(Deserialize, ToSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SourceType {
    Hook,
    Worker,
    Provider,
    Server,
    Api,
}

impl SourceType {
    fn as_str(self) -> &'static str {
        match self {
            SourceType::Hook => "hook",
            SourceType::Worker => "worker",
            SourceType::Provider => "provider",
            SourceType::Server => "server",
            SourceType::Api => "api",
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventInput {
    /// Project id or slug.
    pub project_id: String,
    pub source_type: SourceType,
    /// e.g. `tool_use`, `assistant_message`, `user_prompt`, or your own.
    pub event_type: String,
    pub occurred_at_epoch: i64,
    pub payload: Option<serde_json::Value>,
    pub server_session_id: Option<Uuid>,
    pub content_session_id: Option<String>,
    pub memory_session_id: Option<String>,
    pub platform_source: Option<String>,
    /// The client's id for the event; a repeat is answered with the stored event.
    pub source_event_id: Option<String>,
    pub metadata: Option<serde_json::Value>,
}

#[derive(Deserialize, IntoParams, Clone, Copy)]
pub struct IngestQuery {
    /// `false` stores the event without a generation job.
    pub generate: Option<bool>,
    /// `true` waits (bounded) for the job to settle and always includes `generationJob`.
    pub wait: Option<bool>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventResponse {
    pub event: Option<EventDto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_job: Option<Option<JobSummaryDto>>,
    /// Set when nothing was stored: `skipped_tool` or `private_turn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub skipped: Option<Skipped>,
}

/// The event's idempotency key: the client's `sourceEventId`, else the agent's
/// tool-call id in the payload (`tool_use_id`) within its session, else the
/// `Idempotency-Key` header; an event with none of them is always new.
fn idempotency_key(input: &EventInput, payload: &serde_json::Value, header: Option<&str>) -> String {
    let tool_use_id = payload
        .get("tool_use_id")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty());
    let session = input
        .server_session_id
        .map(|id| id.to_string())
        .or_else(|| input.content_session_id.clone())
        .or_else(|| input.memory_session_id.clone())
        .unwrap_or_default();
    match (&input.source_event_id, tool_use_id, header) {
        (Some(id), _, _) => format!("src:{}:{id}", input.event_type),
        (None, Some(tool), _) => format!("tool:{session}:{}:{tool}", input.event_type),
        (None, None, Some(h)) => format!("hdr:{h}"),
        (None, None, None) => format!("new:{}", Uuid::now_v7()),
    }
}

fn to_incoming(
    input: EventInput,
    query: IngestQuery,
    header: Option<&str>,
) -> Result<IncomingEvent, ApiError> {
    if input.event_type.trim().is_empty() || input.event_type.len() > 100 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`eventType` must be 1 to 100 characters",
        ));
    }
    let occurred_at = from_epoch_ms(input.occurred_at_epoch)
        .ok_or_else(|| ApiError::unprocessable("invalid_field", "`occurredAtEpoch` is out of range"))?;
    let idempotency_key = idempotency_key(
        &input,
        input.payload.as_ref().unwrap_or(&serde_json::Value::Null),
        header,
    );
    let payload = input.payload.unwrap_or_else(|| serde_json::json!({}));
    let agent = input
        .platform_source
        .clone()
        .unwrap_or_else(|| "claude-code".into());
    let session = match (
        input.server_session_id,
        input.content_session_id.or(input.memory_session_id),
    ) {
        (Some(id), _) => SessionTarget::Server(id),
        (None, Some(content)) if !content.is_empty() && content.len() <= 256 => SessionTarget::Content {
            content_session_id: content,
            agent,
        },
        (None, Some(_)) => {
            return Err(ApiError::unprocessable(
                "invalid_field",
                "`contentSessionId` must be 1 to 256 characters",
            ));
        }
        (None, None) => SessionTarget::None,
    };
    let kind = EventKind::from_event_type(&input.event_type);
    let tool_name = payload
        .get("tool_name")
        .and_then(|t| t.as_str())
        .map(str::to_string);
    let prompt = (kind == EventKind::UserPrompt)
        .then(|| payload.get("prompt").and_then(|p| p.as_str()).map(str::to_string))
        .flatten();
    Ok(IncomingEvent {
        source_adapter: "api".into(),
        source_type: input.source_type.as_str().into(),
        event_type: input.event_type,
        kind,
        session,
        platform_source: input.platform_source,
        source_event_id: input.source_event_id,
        idempotency_key,
        key_per_turn: false,
        tool_name,
        prompt,
        payload,
        metadata: input.metadata.unwrap_or_else(|| serde_json::json!({})),
        occurred_at,
        generate: query.generate.unwrap_or(true),
        seal_now: query.wait.unwrap_or(false),
        actor: Default::default(),
    })
}

async fn respond(state: &AppState, outcome: Outcome, wait: bool) -> ApiResult<(StatusCode, EventResponse)> {
    let status = if outcome.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut job = outcome
        .job
        .as_ref()
        .map(|j| JobSummaryDto::new(j, outcome.transport));
    if wait && let Some(j) = &mut job {
        wait_for_settled(state, j, state.config.limits.max_wait).await?;
    }
    let generation_job = if wait { Some(job) } else { job.map(Some) };
    Ok((
        status,
        EventResponse {
            event: outcome.event.map(Into::into),
            generation_job,
            skipped: outcome.skipped,
        },
    ))
}

/// Polls the job until it is terminal or the wait runs out.
async fn wait_for_settled(state: &AppState, job: &mut JobSummaryDto, max: Duration) -> ApiResult<()> {
    let deadline = Instant::now() + max;
    loop {
        if JobStatus::parse(&job.status).is_some_and(|s| s.is_terminal()) || Instant::now() >= deadline {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100).min(deadline - Instant::now())).await;
        let Some(row) = crate::store::jobs::status_of(&state.pool, job.id).await? else {
            return Ok(());
        };
        job.status = row.0;
        job.updated_at_epoch = row.1.timestamp_millis();
    }
}

/// Post one event.
#[utoipa::path(post, path = "/v1/events", tag = "events", request_body = EventInput,
    params(IngestQuery, ("Idempotency-Key" = Option<String>, Header, description = "The client's key for this event")),
    responses((status = 201, body = EventResponse, description = "Stored"),
              (status = 200, body = EventResponse,
               description = "Already stored (same sourceEventId, payload.tool_use_id in the session, or Idempotency-Key), or skipped"),
              (status = 404, body = crate::error::ErrorBody), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_event(
    State(state): State<AppState>,
    auth: Auth,
    Query(query): Query<IngestQuery>,
    headers: HeaderMap,
    Json(input): Json<EventInput>,
) -> ApiResult<(StatusCode, Json<EventResponse>)> {
    auth.require(Scope::Ingest)?;
    let project = auth.project(&state, Some(&input.project_id)).await?;
    let header = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty() && k.len() <= 200);
    let mut event = to_incoming(input, query, header)?;
    event.actor = auth.actor();
    let outcome = ingest::ingest_one(&state, project, event).await?;
    let (status, body) = respond(&state, outcome, query.wait.unwrap_or(false)).await?;
    Ok((status, Json(body)))
}

#[derive(Deserialize, ToSchema)]
pub struct EventBatch {
    /// 1 to 500 events, stored in one transaction.
    pub events: Vec<EventInput>,
}

#[derive(Serialize, ToSchema)]
pub struct EventBatchResponse {
    pub events: Vec<EventResponse>,
}

pub const MAX_BATCH: usize = 500;

/// Post up to 500 events in one transaction.
#[utoipa::path(post, path = "/v1/events/batch", tag = "events", request_body = EventBatch, params(IngestQuery),
    responses((status = 201, body = EventBatchResponse), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_event_batch(
    State(state): State<AppState>,
    auth: Auth,
    Query(query): Query<IngestQuery>,
    Json(batch): Json<EventBatch>,
) -> ApiResult<(StatusCode, Json<EventBatchResponse>)> {
    auth.require(Scope::Ingest)?;
    if batch.events.is_empty() || batch.events.len() > MAX_BATCH {
        return Err(ApiError::unprocessable(
            "invalid_batch",
            format!("a batch holds 1 to {MAX_BATCH} events"),
        ));
    }
    let mut projects: Vec<(String, ProjectRef)> = Vec::new();
    let mut incoming = Vec::with_capacity(batch.events.len());
    for input in batch.events {
        let project = match projects.iter().find(|(k, _)| *k == input.project_id) {
            Some((_, p)) => *p,
            None => {
                let p = auth.project(&state, Some(&input.project_id)).await?;
                projects.push((input.project_id.clone(), p));
                p
            }
        };
        let mut event = to_incoming(input, query, None)?;
        event.actor = auth.actor();
        incoming.push((project, event));
    }
    let outcomes = ingest::ingest_batch(&state, incoming).await?;
    let mut events = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        events.push(respond(&state, outcome, false).await?.1);
    }
    Ok((StatusCode::CREATED, Json(EventBatchResponse { events })))
}

#[derive(Serialize, ToSchema)]
pub struct OneEvent {
    pub event: EventDto,
}

/// Read an event back.
#[utoipa::path(get, path = "/v1/events/{id}", tag = "events", params(("id" = Uuid, Path)),
    responses((status = 200, body = OneEvent), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_event(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<OneEvent>> {
    auth.require(Scope::Read)?;
    let event = events::get(
        &state.pool,
        auth.team_id,
        auth.project_filter(),
        id,
        auth.viewer(),
    )
    .await?
    .ok_or_else(|| ApiError::not_found("event_not_found", "no such event"))?;
    Ok(Json(OneEvent { event: event.into() }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventObservations {
    pub event_id: Uuid,
    pub observations: Vec<ObservationDto>,
}

/// The observations generated from the job this event fed.
#[utoipa::path(get, path = "/v1/events/{id}/observations", tag = "events", params(("id" = Uuid, Path)),
    responses((status = 200, body = EventObservations), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_event_observations(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<EventObservations>> {
    auth.require(Scope::Read)?;
    let event = events::get(
        &state.pool,
        auth.team_id,
        auth.project_filter(),
        id,
        auth.viewer(),
    )
    .await?
    .ok_or_else(|| ApiError::not_found("event_not_found", "no such event"))?;
    let observations = match event.job_id {
        Some(job) => observations::for_job(&state.pool, event.project_id, job).await?,
        None => vec![],
    };
    Ok(Json(EventObservations {
        event_id: id,
        observations: observations.into_iter().map(Into::into).collect(),
    }))
}
