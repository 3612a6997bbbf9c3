//! Liveness, readiness, health and `/v1/info`.

use axum::{extract::State, http::StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use cairn_shared::auth::Scope;

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
    cairn_shared::db::ping(&state.pool).await
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`, `degraded` (Redis down or the queue backed up) or `down` (Postgres down).
    pub status: &'static str,
    pub postgres: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsHealth>,
}

/// Generation jobs, as health and `/v1/info` report them.
#[derive(Serialize, ToSchema)]
pub struct JobsHealth {
    pub by_status: std::collections::BTreeMap<String, i64>,
    /// Seconds the longest-waiting due job has waited (null when none waits).
    pub oldest_queued_age_seconds: Option<f64>,
    /// Past this the queue is `degraded` (`CAIRN_QUEUE_AGE_DEGRADED_MS`).
    pub degraded_after_seconds: f64,
    pub status: &'static str,
}

impl JobsHealth {
    fn new(stats: jobs::QueueStats, threshold: std::time::Duration) -> Self {
        let backed_up = stats
            .oldest_queued_age_seconds
            .is_some_and(|age| age > threshold.as_secs_f64());
        Self {
            by_status: stats.by_status,
            oldest_queued_age_seconds: stats.oldest_queued_age_seconds,
            degraded_after_seconds: threshold.as_secs_f64(),
            status: if backed_up { "degraded" } else { "ok" },
        }
    }
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
            jobs: None,
        }),
    )
}

/// Health: 200 when Postgres and Redis answer and no due job has waited
/// past the threshold; otherwise 503 with `degraded` or `down`. Job counts
/// are shown only to an `admin` token (its team's or project's; a
/// superadmin's, all).
#[utoipa::path(get, path = "/api/health", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = Health)),
    security((), ("bearer" = [])))]
pub async fn health(State(state): State<AppState>, auth: Option<Auth>) -> (StatusCode, Json<Health>) {
    // Whose jobs the caller may count: (team, project); None for no one's.
    let scope = match &auth {
        Some(a) if a.scopes.contains(&Scope::Superadmin) => Some((None, None)),
        Some(a) if a.require(Scope::Admin).is_ok() => Some((Some(a.team_id), a.project_id)),
        _ => None,
    };
    let (team, project) = scope.unwrap_or_default();
    let (stats, redis) = tokio::join!(
        jobs::queue_stats(&state.pool, team, project),
        state.wakeups.ping()
    );
    let jobs = stats
        .ok()
        .map(|s| JobsHealth::new(s, state.config.queue_age_degraded));
    let pg = jobs.is_some();
    let status = match (&jobs, redis) {
        (None, _) => "down",
        (Some(j), true) if j.status == "ok" => "ok",
        _ => "degraded",
    };
    let code = if status == "ok" {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        code,
        Json(Health {
            status,
            postgres: up(pg),
            redis: Some(up(redis)),
            jobs: jobs.filter(|_| scope.is_some()),
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
    /// Generation jobs of the caller's project (project tokens) or team, by status.
    pub queue: std::collections::BTreeMap<String, i64>,
    /// The same jobs with the oldest due job's wait.
    pub jobs: JobsHealth,
    /// The daily LLM token budget of the caller's project (and team).
    pub llm_budget: super::usage::LlmBudget,
}

/// Runtime, auth mode, Postgres and Redis status, and the generation queue.
#[utoipa::path(get, path = "/v1/info", tag = "health", responses((status = 200, body = Info)),
    security(("bearer" = [])))]
pub async fn info(State(state): State<AppState>, auth: Auth) -> ApiResult<Json<Info>> {
    auth.require(Scope::Read)?;
    let (pg, redis) = tokio::join!(postgres_ok(&state), state.wakeups.ping());
    let stats = jobs::queue_stats(&state.pool, Some(auth.team_id), auth.project_id).await?;
    let jobs = JobsHealth::new(stats, state.config.queue_age_degraded);
    let llm_budget = super::usage::llm_budget(&state, auth.team_id, auth.project_id).await?;
    Ok(Json(Info {
        runtime: "cairn",
        version: env!("CARGO_PKG_VERSION"),
        auth_mode: "token",
        postgres: Status { status: up(pg) },
        redis: Status { status: up(redis) },
        queue: jobs.by_status.clone(),
        jobs,
        llm_budget,
    }))
}
