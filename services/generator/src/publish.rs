//! Live notices after a job's rows commit: `observation.created` and
//! `summary.created`, published on Redis channel `cairn:live:{project_id}`
//! for dashboards and streams on any API replica. Best effort: a notice
//! lost to a Redis outage loses nothing, the rows are in Postgres.

use std::time::Duration;

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
            let Ok(body) = serde_json::to_string(notice) else {
                continue;
            };
            let mut conn = self.conn.clone();
            let cmd = redis::cmd("PUBLISH")
                .arg(live_channel(notice.project_id))
                .arg(body)
                .to_owned();
            let sent = tokio::time::timeout(self.timeout, cmd.query_async::<i64>(&mut conn)).await;
            if !matches!(sent, Ok(Ok(_))) {
                tracing::debug!(id = %notice.id, "live notice not published (Redis unavailable)");
                return;
            }
        }
    }
}
