//! Live notices, published on Redis channel `cairn:live:{project_id}` for
//! dashboards and streams on any API replica: `observation.created` and
//! `summary.created` after a job's rows commit, and `job.changed` when a
//! job completes, fails or is sent back for a later attempt. Best effort: a
//! notice lost to a Redis outage loses nothing, the rows are in Postgres.

use std::time::Duration;

use cairn_shared::jobs::JobType;
use redis::aio::ConnectionManager;
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

#[derive(Clone)]
pub struct LivePublisher {
    conn: ConnectionManager,
    timeout: Duration,
}

impl LivePublisher {
    pub fn new(redis_url: &str, timeout: Duration) -> anyhow::Result<Self> {
        Ok(Self {
            conn: cairn_shared::redis_conn::lazy_connection(redis_url, timeout)?,
            timeout,
        })
    }

    pub async fn publish(&self, notices: &[LiveNotice]) {
        for notice in notices {
            if !self.send(notice.project_id, notice).await {
                tracing::debug!(id = %notice.id, "live notice not published (Redis unavailable)");
                return;
            }
        }
    }

    /// One `job.changed` notice; no database read.
    pub async fn job_changed(&self, notice: &JobChanged) {
        if !self.send(notice.project_id, notice).await {
            tracing::debug!(job_id = %notice.job_id, "job notice not published (Redis unavailable)");
        }
    }

    async fn send(&self, project_id: Uuid, notice: &impl Serialize) -> bool {
        let Ok(body) = serde_json::to_string(notice) else {
            return true;
        };
        let mut conn = self.conn.clone();
        let cmd = redis::cmd("PUBLISH")
            .arg(live_channel(project_id))
            .arg(body)
            .to_owned();
        let sent = tokio::time::timeout(self.timeout, cmd.query_async::<i64>(&mut conn)).await;
        matches!(sent, Ok(Ok(_)))
    }
}
