//! `GET /v1/live?projectId=`: a project's live notices as Server-Sent
//! Events (`observation.created`, `summary.created`, `job.changed`,
//! `observation.updated`; `lagged` when the stream fell behind), event
//! name = the notice's `type`, `data:` = the notice's JSON. The first event
//! is `ready`. The token is authorised at connect (read scope, the project
//! visible to it) and checked again every auth-cache TTL
//! (`CAIRN_AUTH_CACHE_TTL_MS`, 2 s by default): a revoked or expired
//! token's stream ends within that time. At most
//! `live::MAX_STREAMS_PER_TOKEN` streams per token (429 past it).

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::State,
    http::{HeaderValue, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use cairn_shared::{auth::Scope, tenancy::tokens};
use futures::Stream;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::Query,
    live::{MAX_STREAMS_PER_TOKEN, Subscription},
    state::AppState,
};

/// Comments sent on an idle stream, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct LiveQuery {
    /// Project id or slug; a project token's own project by default.
    pub project_id: Option<String>,
}

/// A project's live notices, as Server-Sent Events (read).
#[utoipa::path(get, path = "/v1/live", tag = "projects", params(LiveQuery),
    responses((status = 200, content_type = "text/event-stream", body = String,
               description = "Events `ready`, then `observation.created`, `summary.created`, `job.changed`, \
                              `observation.updated` (and `lagged`), each `data:` a JSON notice"),
              (status = 401, body = crate::error::ErrorBody, description = "No credentials"),
              (status = 403, body = crate::error::ErrorBody, description = "Invalid token or missing `read` scope"),
              (status = 404, body = crate::error::ErrorBody, description = "No such project for this token"),
              (status = 429, body = crate::error::ErrorBody, description = "This token already holds 8 streams")),
    security(("bearer" = [])))]
pub async fn get_live(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<LiveQuery>,
) -> ApiResult<Response> {
    auth.require(Scope::Read)?;
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let subscription = state.live.subscribe(auth.token_id, project.id).map_err(|_| {
        ApiError::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams",
            format!("this token already holds {MAX_STREAMS_PER_TOKEN} live streams; close one"),
        )
        .retry_after(5)
    })?;
    let recheck = state.config.auth_cache_ttl.max(Duration::from_millis(250));
    let ready = serde_json::json!({ "type": "ready", "projectId": project.id }).to_string();
    // In a private-first project a memory's notice says only that one was
    // written: its title may be a private memory's, fetched by id through
    // the reads that check who may see it.
    let private_first = crate::context::gather::settings(&state.pool, project.id)
        .await?
        .is_some_and(|s| s.memory_visibility == "private-first");
    let untitled = private_first && !auth.viewer().sees_all;
    let stream = notices(state, auth.token_id, subscription, recheck, ready, untitled);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

struct Streaming {
    state: AppState,
    token_id: Uuid,
    subscription: Subscription,
    recheck: tokio::time::Interval,
    ready: Option<String>,
}

fn notices(
    state: AppState,
    token_id: Uuid,
    subscription: Subscription,
    recheck: Duration,
    ready: String,
    untitled: bool,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let mut interval = tokio::time::interval(recheck);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let start = Streaming {
        state,
        token_id,
        subscription,
        recheck: interval,
        ready: Some(ready),
    };
    futures::stream::unfold(start, move |mut s| async move {
        if let Some(ready) = s.ready.take() {
            // The interval's first tick is immediate: take it now.
            s.recheck.tick().await;
            return Some((Ok(Event::default().event("ready").data(ready)), s));
        }
        loop {
            tokio::select! {
                notice = s.subscription.recv() => {
                    let notice = notice?;
                    let data = if untitled && notice.kind.ends_with(".created") {
                        untitle(&notice.data)
                    } else {
                        notice.data.to_string()
                    };
                    let event = Event::default().event(&*notice.kind).data(data);
                    return Some((Ok(event), s));
                }
                _ = s.recheck.tick() => {
                    if !still_valid(&s.state, s.token_id).await {
                        tracing::info!(token_id = %s.token_id, "live stream ended: token revoked or expired");
                        return None;
                    }
                }
            }
        }
    })
}

/// A memory notice without what it says of the memory (title, session).
fn untitle(data: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        fields.remove("title");
        fields.remove("session_id");
        fields.remove("sessionId");
    }
    value.to_string()
}

/// Whether the stream's token is still unrevoked and unexpired. A database
/// error keeps the stream (it was authorised; the next check decides).
async fn still_valid(state: &AppState, token_id: Uuid) -> bool {
    match tokens::load_for_auth(&state.pool, token_id).await {
        Ok(Some(row)) => row.token.revoked_at.is_none() && row.token.is_usable(chrono::Utc::now()),
        Ok(None) => false,
        Err(e) => {
            tracing::debug!(error = %e, "live stream: token check failed; kept");
            true
        }
    }
}
