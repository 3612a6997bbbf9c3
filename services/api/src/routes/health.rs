//! Liveness, readiness, health and `/v1/info`.

use axum::{extract::State, http::StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{auth::Auth, error::ApiResult, extract::Json, state::AppState, store::jobs};

#[derive(Serialize, ToSchema)]
pub struct Status {
    pub status: &'static str,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = Status)))]
pub async fn healthz() -> Json<Status> {
    Json(Status { status: "ok" })
}

async fn postgres_ok(state: &AppState) -> bool {
    sqlx::query("SELECT 1").execute(&state.pool).await.is_ok()
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
    pub postgres: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis: Option<&'static str>,
}

fn up(ok: bool) -> &'static str {
    if ok { "ok" } else { "down" }
}

/// Readiness: 200 when Postgres answers, else 503.
#[utoipa::path(get, path = "/api/readiness", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = Health)))]
pub async fn readiness(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let pg = postgres_ok(&state).await;
    let code = if pg {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        code,
        Json(Health {
            status: up(pg),
            postgres: up(pg),
            redis: None,
        }),
    )
}

/// Health: 200 when Postgres and Redis answer, else 503.
#[utoipa::path(get, path = "/api/health", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = Health)))]
pub async fn health(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let (pg, redis) = tokio::join!(postgres_ok(&state), state.wakeups.ping());
    let ok = pg && redis;
    let code = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        code,
        Json(Health {
            status: up(ok),
            postgres: up(pg),
            redis: Some(up(redis)),
        }),
    )
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub runtime: &'static str,
    pub version: &'static str,
    pub auth_mode: &'static str,
    pub postgres: Status,
    pub redis: Status,
    /// The caller's team's generation jobs by status.
    pub queue: std::collections::BTreeMap<String, i64>,
}

/// Runtime, auth mode, Postgres and Redis status, and queue counts by status.
#[utoipa::path(get, path = "/v1/info", tag = "health", responses((status = 200, body = Info)),
    security(("bearer" = [])))]
pub async fn info(State(state): State<AppState>, auth: Auth) -> ApiResult<Json<Info>> {
    let (pg, redis) = tokio::join!(postgres_ok(&state), state.wakeups.ping());
    let mut queue: std::collections::BTreeMap<String, i64> = cairn_shared::jobs::JobStatus::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), 0))
        .collect();
    for (status, n) in jobs::counts_by_status(&state.pool, Some(auth.team_id)).await? {
        queue.insert(status, n);
    }
    Ok(Json(Info {
        runtime: "cairn",
        version: env!("CARGO_PKG_VERSION"),
        auth_mode: "token",
        postgres: Status { status: up(pg) },
        redis: Status { status: up(redis) },
        queue,
    }))
}
