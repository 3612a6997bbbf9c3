//! The rate limits shared by every replica: GCRA state in Redis, checked and
//! moved on in one script call (`gcra.lua`, on Redis's clock). When Redis
//! does not answer within its timeout, the replica falls back to its own
//! counters alone and leaves Redis be for a second before trying again, so
//! an outage costs no request more than one timeout.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use governor::Quota;
use redis::{Script, aio::ConnectionManager};

/// How long the replica keeps to its own counters after Redis failed.
const BACK_OFF: Duration = Duration::from_secs(1);

pub struct Shared {
    conn: ConnectionManager,
    script: Script,
    timeout: Duration,
    /// Unix milliseconds before which Redis is not asked (after a failure).
    skip_until_ms: AtomicU64,
}

/// One limit to check: its Redis key and quota.
pub struct Limit {
    pub key: String,
    pub quota: Quota,
}

/// What Redis said.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Refused: seconds to wait.
    Refused(u64),
    /// Redis did not answer (or is being left be): the replica's own
    /// counters decide.
    Unavailable,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

impl Shared {
    pub fn new(conn: ConnectionManager, timeout: Duration) -> Self {
        Self {
            conn,
            script: Script::new(include_str!("gcra.lua")),
            timeout,
            skip_until_ms: AtomicU64::new(0),
        }
    }

    pub async fn check(&self, limits: &[Limit]) -> Verdict {
        if limits.is_empty() {
            return Verdict::Allowed;
        }
        if now_ms() < self.skip_until_ms.load(Ordering::Relaxed) {
            return Verdict::Unavailable;
        }
        let mut invocation = self.script.prepare_invoke();
        for limit in limits {
            let interval = limit.quota.replenish_interval().as_micros() as u64;
            invocation
                .key(&limit.key)
                .arg(interval)
                .arg(interval * u64::from(limit.quota.burst_size().get()));
        }
        let mut conn = self.conn.clone();
        match tokio::time::timeout(self.timeout, invocation.invoke_async::<u64>(&mut conn)).await {
            Ok(Ok(0)) => Verdict::Allowed,
            Ok(Ok(wait_us)) => Verdict::Refused(wait_us.div_ceil(1_000_000).max(1)),
            Ok(Err(e)) => self.unavailable(&e.to_string()),
            Err(_) => self.unavailable("timed out"),
        }
    }

    fn unavailable(&self, why: &str) -> Verdict {
        tracing::warn!(
            error = why,
            "shared rate limit unavailable: this replica's own counters decide for {BACK_OFF:?}"
        );
        metrics::counter!("cairn_rate_limit_shared_unavailable_total").increment(1);
        self.skip_until_ms
            .store(now_ms() + BACK_OFF.as_millis() as u64, Ordering::Relaxed);
        Verdict::Unavailable
    }
}
