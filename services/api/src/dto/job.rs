//! The `generationJob` object: short on ingest answers, full on `/v1/jobs`.

use cairn_shared::{
    jobs::JobStatus,
    time::{opt_epoch_ms, to_epoch_ms},
};
use cairn_wakeup::Transport;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::jobs::JobRow;

/// As returned on ingest.
#[derive(Serialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct JobSummaryDto {
    pub id: Uuid,
    /// queued, processing, completed, failed or cancelled.
    pub status: String,
    pub job_type: String,
    /// `agent_event` or `session`.
    pub source_type: String,
    pub source_id: Option<Uuid>,
    /// `enqueued` (wake-up pushed), `queued_only` (Redis unavailable; the sweeper
    /// finds it) or `skipped` (not due yet: its turn is still open).
    #[schema(value_type = String)]
    pub transport: Transport,
    pub created_at_epoch: i64,
    pub updated_at_epoch: i64,
}

impl JobSummaryDto {
    pub fn new(r: &JobRow, transport: Transport) -> Self {
        Self {
            id: r.id,
            status: r.status.as_str().to_string(),
            job_type: r.job_type.as_str().into(),
            source_type: r.source_type.clone(),
            source_id: source_id(r),
            transport,
            created_at_epoch: to_epoch_ms(r.created_at),
            updated_at_epoch: to_epoch_ms(r.updated_at),
        }
    }
}

fn source_id(r: &JobRow) -> Option<Uuid> {
    if r.source_type == "session" {
        r.session_id
    } else {
        r.agent_event_id
    }
}

/// As returned by `/v1/jobs`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobDto {
    pub id: Uuid,
    pub project_id: Uuid,
    pub team_id: Uuid,
    pub status: String,
    pub job_type: String,
    pub source_type: String,
    pub source_id: Option<Uuid>,
    pub agent_event_id: Option<Uuid>,
    pub server_session_id: Option<Uuid>,
    pub prompt_number: Option<i32>,
    pub event_count: i32,
    pub attempts: i32,
    pub max_attempts: i32,
    pub retried_count: i32,
    pub next_attempt_at_epoch: Option<i64>,
    pub completed_at_epoch: Option<i64>,
    pub failed_at_epoch: Option<i64>,
    pub cancelled_at_epoch: Option<i64>,
    pub last_error: Option<String>,
    pub created_at_epoch: i64,
    pub updated_at_epoch: i64,
}

impl From<JobRow> for JobDto {
    fn from(r: JobRow) -> Self {
        Self {
            source_id: source_id(&r),
            id: r.id,
            project_id: r.project_id,
            team_id: r.team_id,
            next_attempt_at_epoch: (r.status == JobStatus::Queued).then(|| to_epoch_ms(r.next_attempt_at)),
            status: r.status.as_str().to_string(),
            job_type: r.job_type.as_str().into(),
            source_type: r.source_type,
            agent_event_id: r.agent_event_id,
            server_session_id: r.session_id,
            prompt_number: r.prompt_number,
            event_count: r.event_count,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            retried_count: r.retried_count,
            completed_at_epoch: opt_epoch_ms(r.completed_at),
            failed_at_epoch: opt_epoch_ms(r.failed_at),
            cancelled_at_epoch: opt_epoch_ms(r.cancelled_at),
            last_error: r.last_error,
            created_at_epoch: to_epoch_ms(r.created_at),
            updated_at_epoch: to_epoch_ms(r.updated_at),
        }
    }
}
