//! `GET /v1/admin/queue`: the generation queue at a glance, for the admin
//! dashboard: depth by status, how long the oldest due job has waited,
//! completions per minute over the last hour, and failed attempts by class
//! over the last day. A team admin reads its team; a superadmin every team
//! (or one, with `teamId`).

use axum::extract::State;
use cairn_shared::auth::Scope;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Query},
    routes::admin::acting_team,
    state::AppState,
    store::queue,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct QueueQuery {
    /// Superadmin: one team (default: every team). Others: their own team only.
    pub team_id: Option<Uuid>,
}

#[derive(Serialize, ToSchema)]
pub struct QueueDepth {
    pub queued: i64,
    pub processing: i64,
    pub failed: i64,
    pub cancelled: i64,
}

#[derive(Serialize, ToSchema)]
pub struct MinuteCount {
    /// The minute's start (UTC).
    pub minute: DateTime<Utc>,
    pub count: i64,
}

#[derive(Serialize, ToSchema)]
pub struct ClassCount {
    /// The error's class: `transient`, `rate_limit`, `quota`, `auth`,
    /// `parse_error`, `unrecoverable`, `lease expired`, `attempts exhausted` or `other`.
    pub class: String,
    pub count: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueFigures {
    /// The team read; null: every team.
    pub team_id: Option<Uuid>,
    /// Jobs now in each status (failed and cancelled: all kept).
    pub depth: QueueDepth,
    /// Seconds the oldest due queued job has waited; null when none is due.
    pub oldest_due_age_seconds: Option<f64>,
    pub completed_last_5m: i64,
    /// The last 60 minutes, oldest first, the current minute last; zeros included.
    pub completed_per_minute: Vec<MinuteCount>,
    /// Failed attempts (retried or final, and rescues) of the last 24 hours, most first.
    pub failures_by_class: Vec<ClassCount>,
}

/// The generation queue's figures (admin; a superadmin reads every team).
#[utoipa::path(get, path = "/v1/admin/queue", tag = "admin", params(QueueQuery),
    responses((status = 200, body = QueueFigures, description = "The queue's figures"),
              (status = 401, body = crate::error::ErrorBody, description = "No credentials"),
              (status = 403, body = crate::error::ErrorBody, description = "Not a team admin token"),
              (status = 404, body = crate::error::ErrorBody, description = "No such team for this token")),
    security(("bearer" = [])))]
pub async fn get_queue(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<QueueQuery>,
) -> ApiResult<Json<QueueFigures>> {
    auth.require(Scope::Admin)?;
    if auth.project_id.is_some() {
        return Err(ApiError::forbidden(
            "insufficient_scope",
            "the queue is team-wide: a project token cannot read it",
        ));
    }
    let team_id = match q.team_id {
        None if auth.scopes.contains(&Scope::Superadmin) => None,
        requested => Some(acting_team(&auth, requested)?),
    };
    let (depth, per_minute, failures) = tokio::try_join!(
        queue::depth(&state.pool, team_id),
        queue::completed_per_minute(&state.pool, team_id),
        queue::failures_by_class(&state.pool, team_id),
    )?;
    Ok(Json(QueueFigures {
        team_id,
        depth: QueueDepth {
            queued: depth.queued,
            processing: depth.processing,
            failed: depth.failed,
            cancelled: depth.cancelled,
        },
        oldest_due_age_seconds: depth.oldest_due_age_seconds.map(|s| s.max(0.0)),
        completed_last_5m: depth.completed_last_5m,
        completed_per_minute: last_hour(Utc::now(), &per_minute),
        failures_by_class: failures
            .into_iter()
            .map(|c| ClassCount {
                class: c.class,
                count: c.count,
            })
            .collect(),
    }))
}

/// The 60 minutes up to `now`'s, each with its count (zero when absent).
fn last_hour(now: DateTime<Utc>, counted: &[queue::MinuteCount]) -> Vec<MinuteCount> {
    let minute = TimeDelta::minutes(1);
    let current = now.duration_trunc(minute).unwrap_or(now);
    (0..60)
        .rev()
        .map(|back| {
            let at = current - minute * back;
            MinuteCount {
                minute: at,
                count: counted.iter().find(|c| c.minute == at).map_or(0, |c| c.count),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_last_hour_has_sixty_minutes_with_zeros() {
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 12, 30, 42).unwrap();
        let counted = [
            queue::MinuteCount {
                minute: Utc.with_ymd_and_hms(2026, 1, 1, 12, 30, 0).unwrap(),
                count: 3,
            },
            queue::MinuteCount {
                minute: Utc.with_ymd_and_hms(2026, 1, 1, 11, 31, 0).unwrap(),
                count: 2,
            },
        ];
        let hour = last_hour(now, &counted);
        assert_eq!(hour.len(), 60);
        assert_eq!(
            hour[0].minute,
            Utc.with_ymd_and_hms(2026, 1, 1, 11, 31, 0).unwrap()
        );
        assert_eq!(hour[0].count, 2);
        assert_eq!(hour[59].count, 3);
        assert_eq!(hour.iter().map(|m| m.count).sum::<i64>(), 5);
    }
}
