//! claude-mem's job routes: list and read generation jobs, and the operator's
//! retry and cancel, which go through the job state machine and are audited.

use axum::extract::State;
use cairn_shared::{
    auth::Scope,
    jobs::{
        JobStatus,
        state_machine::{self, Transition, TransitionError},
    },
    time::from_epoch_ms,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::JobDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::jobs::{self, JobFilter, JobRow},
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ListJobsQuery {
    /// queued, processing, completed, failed or cancelled.
    pub status: Option<String>,
    /// `agent_event` or `session`.
    pub source_type: Option<String>,
    /// At most 200; default 50.
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    /// Only jobs created at or after this epoch-ms time.
    pub since: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct JobList {
    pub jobs: Vec<JobDto>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

/// List generation jobs, newest first.
#[utoipa::path(get, path = "/v1/jobs", tag = "jobs", params(ListJobsQuery),
    responses((status = 200, body = JobList), (status = 400, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_jobs(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<ListJobsQuery>,
) -> ApiResult<Json<JobList>> {
    auth.require(Scope::Read)?;
    if let Some(s) = &q.status
        && JobStatus::parse(s).is_none()
    {
        return Err(ApiError::bad_request(
            "invalid_status",
            format!("unknown status `{s}`"),
        ));
    }
    let limit = q.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::bad_request("invalid_limit", "limit must be 1 to 200"));
    }
    let offset = q.offset.unwrap_or(0);
    if offset < 0 {
        return Err(ApiError::bad_request(
            "invalid_offset",
            "offset must be 0 or more",
        ));
    }
    let since = match q.since {
        Some(ms) => Some(
            from_epoch_ms(ms)
                .ok_or_else(|| ApiError::bad_request("invalid_since", "since is out of range"))?,
        ),
        None => None,
    };
    let filter = JobFilter {
        team_id: auth.team_id,
        project_id: auth.project_filter(),
        status: q.status,
        source_type: q.source_type,
        since,
        limit,
        offset,
    };
    let (rows, total) = jobs::list(&state.pool, &filter).await?;
    Ok(Json(JobList {
        jobs: rows.into_iter().map(Into::into).collect(),
        total,
        limit,
        offset,
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OneJob {
    pub generation_job: JobDto,
}

async fn load(state: &AppState, auth: &Auth, id: Uuid) -> ApiResult<JobRow> {
    jobs::get(&state.pool, auth.team_id, auth.project_filter(), id)
        .await?
        .ok_or_else(|| ApiError::not_found("job_not_found", "no such job"))
}

/// Read a job.
#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "jobs", params(("id" = Uuid, Path)),
    responses((status = 200, body = OneJob), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_job(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<OneJob>> {
    auth.require(Scope::Read)?;
    Ok(Json(OneJob {
        generation_job: load(&state, &auth, id).await?.into(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryResponse {
    pub generation_job: JobDto,
    pub retried_count: i32,
    pub already_queued: bool,
}

/// Send a failed or cancelled job back to the queue (audited). A queued job
/// is left as is; a processing or completed one answers 409.
#[utoipa::path(post, path = "/v1/jobs/{id}/retry", tag = "jobs", params(("id" = Uuid, Path)),
    responses((status = 200, body = RetryResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 409, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn retry_job(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<RetryResponse>> {
    auth.require(Scope::Admin)?;
    let job = load(&state, &auth, id).await?;
    if job.status == JobStatus::Queued {
        return Ok(Json(RetryResponse {
            retried_count: job.retried_count,
            already_queued: true,
            generation_job: job.into(),
        }));
    }
    operate(
        &state,
        &auth,
        &job,
        Transition::OperatorRetry { actor: &actor(&auth) },
    )
    .await?;
    let job = load(&state, &auth, id).await?;
    crate::ingest::publish(&state, &[job.id], None).await;
    Ok(Json(RetryResponse {
        retried_count: job.retried_count,
        already_queued: false,
        generation_job: job.into(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelResponse {
    pub generation_job: JobDto,
    pub already_cancelled: bool,
}

/// Cancel a queued or processing job (audited); a completed or failed one answers 409.
#[utoipa::path(post, path = "/v1/jobs/{id}/cancel", tag = "jobs", params(("id" = Uuid, Path)),
    responses((status = 200, body = CancelResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 409, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn cancel_job(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<CancelResponse>> {
    auth.require(Scope::Admin)?;
    let job = load(&state, &auth, id).await?;
    if job.status == JobStatus::Cancelled {
        return Ok(Json(CancelResponse {
            already_cancelled: true,
            generation_job: job.into(),
        }));
    }
    operate(&state, &auth, &job, Transition::Cancel { actor: &actor(&auth) }).await?;
    let job = load(&state, &auth, id).await?;
    Ok(Json(CancelResponse {
        already_cancelled: false,
        generation_job: job.into(),
    }))
}

fn actor(auth: &Auth) -> String {
    format!("token:{}", auth.token_id)
}

async fn operate(state: &AppState, auth: &Auth, job: &JobRow, transition: Transition<'_>) -> ApiResult<()> {
    let name = transition.name();
    // The transition and its audit entry commit together.
    let mut tx = state.pool.begin().await?;
    match state_machine::apply(&mut tx, job.project_id, job.id, transition).await {
        Ok(_) => {}
        Err(TransitionError::Refused { found, .. }) => {
            let found = found.map(|s| s.as_str()).unwrap_or("unknown");
            return Err(ApiError::conflict(
                "invalid_job_state",
                format!("cannot {name} a job that is {found}"),
            ));
        }
        // Retrying a cancelled turn job after a newer one opened for the same turn.
        Err(TransitionError::Database(sqlx::Error::Database(db)))
            if db.code().as_deref() == Some("23505") =>
        {
            return Err(ApiError::conflict(
                "job_superseded",
                format!("cannot {name} this job: another job for the same turn is open"),
            ));
        }
        Err(TransitionError::Database(e)) => return Err(e.into()),
    }
    crate::routes::admin::record(
        &mut *tx,
        auth,
        crate::routes::admin::Target {
            team_id: job.team_id,
            project_id: Some(job.project_id),
            kind: "generation_job",
            id: job.id,
        },
        if name == "cancel" {
            "job.cancel"
        } else {
            "job.retry"
        },
        serde_json::json!({ "from": job.status.as_str() }),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
