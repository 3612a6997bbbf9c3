//! What generation tells the world: `observation.created` and
//! `summary.created` after a job's rows commit, and `job.changed` when a
//! job completes, fails or is sent back for a later attempt. The server
//! publishes them on Redis (`cairn-generator`'s `publish`); an embedding
//! program may listen or not ([`NoNotices`]). Best effort: a notice lost
//! loses nothing, the rows are in Postgres.

use cairn_shared::jobs::JobType;
use futures::future::BoxFuture;
use serde::Serialize;
use uuid::Uuid;

pub fn live_channel(project_id: Uuid) -> String {
    format!("cairn:live:{project_id}")
}

#[derive(Clone, Debug, Serialize)]
pub struct LiveNotice {
    /// `observation.created` or `summary.created`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub job_id: Uuid,
    pub title: String,
}

/// `job.changed`: a job's new status (`completed`, `failed`, or `queued`
/// again for a later attempt).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobChanged {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub job_id: Uuid,
    pub project_id: Uuid,
    pub status: &'static str,
    pub job_type: &'static str,
}

impl JobChanged {
    pub fn new(job_id: Uuid, project_id: Uuid, status: &'static str, job_type: JobType) -> Self {
        Self {
            kind: "job.changed",
            job_id,
            project_id,
            status,
            job_type: job_type.as_str(),
        }
    }
}

/// Where notices go.
pub trait Notices: Send + Sync {
    /// The rows a job wrote, after their transaction committed.
    fn published<'a>(&'a self, notices: &'a [LiveNotice]) -> BoxFuture<'a, ()>;
    /// A job's new status.
    fn job_changed<'a>(&'a self, notice: &'a JobChanged) -> BoxFuture<'a, ()>;
}

/// Notices nobody listens to.
pub struct NoNotices;

impl Notices for NoNotices {
    fn published<'a>(&'a self, _: &'a [LiveNotice]) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
    fn job_changed<'a>(&'a self, _: &'a JobChanged) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
