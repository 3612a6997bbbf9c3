//! Wake-ups for generators, pushed through apalis on Redis after the ingest
//! transaction commits. A wake-up carries only the job id; losing one loses
//! nothing, because the generator's sweeper finds queued rows in Postgres.
//! The transport between the API and generators; the library (`cairn-core`)
//! runs without it.

pub mod redis_conn;

use std::time::Duration;

use apalis::prelude::TaskSink;
use apalis_redis::{Config, ConnectionManager, RedisStorage};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use cairn_shared::jobs::Transport;

/// The message on the queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobWakeup {
    pub job_id: Uuid,
}

pub fn wakeup_queue_name() -> &'static str {
    "cairn:generation-wakeups"
}

/// The queue's apalis settings, the same on both sides. A wake-up is a hint:
/// no results or events are kept for it in Redis.
pub fn wakeup_config() -> Config {
    Config::default()
        .queue(wakeup_queue_name())
        .persist_results(false)
        .emit_events(false)
}

/// Pushes wake-ups, never blocking ingest for longer than `push_timeout`.
#[derive(Clone)]
pub struct WakeupPublisher {
    storage: RedisStorage<JobWakeup, ConnectionManager>,
    push_timeout: Duration,
}

impl WakeupPublisher {
    /// Connects lazily: an unreachable Redis at start is not an error, and the
    /// connection manager reconnects in the background when Redis returns.
    pub fn new(redis_url: &str, push_timeout: Duration) -> anyhow::Result<Self> {
        let manager = crate::redis_conn::lazy_connection(redis_url, push_timeout)?;
        let storage = RedisStorage::new(manager).with_config(wakeup_config());
        Ok(Self {
            storage,
            push_timeout,
        })
    }

    /// Publishes one wake-up; the answer says whether Redis took it.
    pub async fn publish(&self, job_id: Uuid) -> Transport {
        let mut storage = self.storage.clone();
        match tokio::time::timeout(self.push_timeout, storage.push(JobWakeup { job_id })).await {
            Ok(Ok(())) => Transport::Enqueued,
            Ok(Err(e)) => {
                tracing::warn!(%job_id, error = %e, "wake-up not published; the sweeper will find the job");
                Transport::QueuedOnly
            }
            Err(_) => {
                tracing::warn!(%job_id, "wake-up timed out; the sweeper will find the job");
                Transport::QueuedOnly
            }
        }
    }

    /// The storage, for generators that consume the same queue.
    pub fn storage(&self) -> RedisStorage<JobWakeup, ConnectionManager> {
        self.storage.clone()
    }

    /// True when Redis answers a PING within the push timeout.
    pub async fn ping(&self) -> bool {
        let mut storage = self.storage.clone();
        let conn = storage.get_connection();
        let cmd = redis::cmd("PING");
        let ping = cmd.query_async::<String>(conn);
        matches!(tokio::time::timeout(self.push_timeout, ping).await, Ok(Ok(_)))
    }
}
