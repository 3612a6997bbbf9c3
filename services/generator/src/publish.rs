//! Live notices, published on Redis channel `cairn:live:{project_id}` for
//! dashboards and streams on any API replica (the notices themselves are
//! `cairn_core::generation::notices`).

use std::time::Duration;

use cairn_core::generation::notices::{JobChanged, LiveNotice, Notices, live_channel};
use futures::future::BoxFuture;
use redis::aio::ConnectionManager;
use serde::Serialize;
use uuid::Uuid;

#[derive(Clone)]
pub struct LivePublisher {
    conn: ConnectionManager,
    timeout: Duration,
}

impl LivePublisher {
    pub fn new(redis_url: &str, timeout: Duration) -> anyhow::Result<Self> {
        Ok(Self {
            conn: cairn_wakeup::redis_conn::lazy_connection(redis_url, timeout)?,
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

impl Notices for LivePublisher {
    fn published<'a>(&'a self, notices: &'a [LiveNotice]) -> BoxFuture<'a, ()> {
        Box::pin(self.publish(notices))
    }
    fn job_changed<'a>(&'a self, notice: &'a JobChanged) -> BoxFuture<'a, ()> {
        Box::pin(LivePublisher::job_changed(self, notice))
    }
}
