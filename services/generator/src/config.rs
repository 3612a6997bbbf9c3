//! The generator's configuration, from `CAIRN_*` environment variables.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use cairn_shared::config::{ConfigError, Env, StoreConfig, listen_addr, millis, parsed};

use crate::{prompt::Budget, provider::ProviderConfig, retry::RetryPolicy};

#[derive(Clone, Debug)]
pub struct GeneratorConfig {
    pub store: StoreConfig,
    pub provider: ProviderConfig,
    /// Concurrent jobs in this process (`CAIRN_WORKERS`).
    pub workers: usize,
    /// Names this process's claims: `{prefix}:{index}` per worker (`CAIRN_WORKER_ID`).
    pub worker_prefix: String,
    /// How long a claim lasts without a heartbeat (`CAIRN_LEASE_MS`).
    pub lease: Duration,
    /// How often a running job's lease is extended (`CAIRN_HEARTBEAT_MS`).
    pub heartbeat: Duration,
    /// How often Postgres is swept for due jobs and expired leases (`CAIRN_SWEEP_MS`).
    pub sweep_interval: Duration,
    /// A session with no event for this long is ended and summarised by the
    /// sweeper (`CAIRN_IDLE_SESSION_MS`, default an hour).
    pub idle_session: Duration,
    /// How often the sweeper looks for idle sessions (`CAIRN_IDLE_CHECK_MS`).
    pub idle_check: Duration,
    /// How often the sweeper consolidates and archives memories (`CAIRN_UPKEEP_MS`,
    /// default five minutes; `upkeep`).
    pub upkeep: Duration,
    /// Raw events are dropped this many days after arrival once digested,
    /// unless their project says otherwise (`CAIRN_RAW_EVENT_RETENTION_DAYS`,
    /// default 0: kept for ever); also the job event log's retention.
    pub raw_event_retention_days: i32,
    /// How often the sweeper sheds raw events past retention
    /// (`CAIRN_RETENTION_CHECK_MS`, default an hour; `store::retention`).
    pub retention_check: Duration,
    /// How often the Redis wake-up queue is polled when idle (`CAIRN_WAKEUP_POLL_MS`).
    pub wakeup_poll: Duration,
    /// On SIGTERM, how long in-flight jobs may run before they are released (`CAIRN_DRAIN_TIMEOUT_MS`).
    pub drain_timeout: Duration,
    pub retry: RetryPolicy,
    pub budget: Budget,
    /// `CAIRN_EMBED_*`: the embedder for what jobs write.
    pub embed: cairn_embed::EmbedConfig,
    /// `CAIRN_METRICS_ADDR`: where `/metrics` is served; off when unset.
    pub metrics_addr: Option<SocketAddr>,
    /// `CAIRN_LIVENESS_FILE`: touched by the main loop; `health` checks its age.
    pub liveness_file: PathBuf,
}

/// Where the liveness file is unless `CAIRN_LIVENESS_FILE` says otherwise.
pub const DEFAULT_LIVENESS_FILE: &str = "/tmp/cairn-generator.alive";

impl GeneratorConfig {
    pub fn from_env(env: &dyn Env) -> Result<Self, ConfigError> {
        let lease = millis(env, "CAIRN_LEASE_MS", 60_000)?;
        let heartbeat = millis(env, "CAIRN_HEARTBEAT_MS", (lease.as_millis() as u64 / 3).max(1))?;
        if heartbeat >= lease {
            return Err(ConfigError::Invalid {
                name: "CAIRN_HEARTBEAT_MS",
                value: heartbeat.as_millis().to_string(),
                reason: format!("must be shorter than the lease ({} ms)", lease.as_millis()),
            });
        }
        let workers: usize = parsed(env, "CAIRN_WORKERS", 4)?;
        if workers == 0 {
            return Err(ConfigError::Invalid {
                name: "CAIRN_WORKERS",
                value: "0".into(),
                reason: "at least one worker is needed".into(),
            });
        }
        // apalis-redis keeps its heartbeat in whole seconds internally; under 100 ms wake-ups stall.
        let wakeup_poll = millis(env, "CAIRN_WAKEUP_POLL_MS", 200)?;
        if wakeup_poll < Duration::from_millis(100) {
            return Err(ConfigError::Invalid {
                name: "CAIRN_WAKEUP_POLL_MS",
                value: wakeup_poll.as_millis().to_string(),
                reason: "must be at least 100".into(),
            });
        }
        let default_prefix = format!("{}:{}", hostname(), std::process::id());
        Ok(Self {
            store: StoreConfig::from_env(env)?,
            provider: ProviderConfig::from_env(env)?,
            workers,
            worker_prefix: env.get("CAIRN_WORKER_ID").unwrap_or(default_prefix),
            lease,
            heartbeat,
            sweep_interval: millis(env, "CAIRN_SWEEP_MS", 5_000)?,
            idle_session: millis(env, "CAIRN_IDLE_SESSION_MS", 3_600_000)?,
            idle_check: millis(env, "CAIRN_IDLE_CHECK_MS", 60_000)?,
            upkeep: millis(env, "CAIRN_UPKEEP_MS", 300_000)?,
            raw_event_retention_days: retention_days(env)?,
            retention_check: millis(env, "CAIRN_RETENTION_CHECK_MS", 3_600_000)?,
            wakeup_poll,
            drain_timeout: millis(env, "CAIRN_DRAIN_TIMEOUT_MS", 30_000)?,
            retry: RetryPolicy {
                base: millis(env, "CAIRN_RETRY_BASE_MS", 10_000)?,
                max: millis(env, "CAIRN_RETRY_MAX_MS", 3_600_000)?,
                quota: millis(env, "CAIRN_RETRY_QUOTA_MS", 900_000)?,
            },
            budget: Budget {
                per_event_chars: parsed(env, "CAIRN_PROMPT_EVENT_CHARS", Budget::default().per_event_chars)?,
                total_chars: parsed(env, "CAIRN_PROMPT_TOTAL_CHARS", Budget::default().total_chars)?,
            },
            embed: cairn_embed::EmbedConfig::from_lookup(|k| env.get(k)),
            metrics_addr: env
                .get("CAIRN_METRICS_ADDR")
                .filter(|v| !v.trim().is_empty())
                .map(|_| listen_addr(env, "CAIRN_METRICS_ADDR", ""))
                .transpose()?,
            liveness_file: liveness_file(env),
        })
    }
}

/// `CAIRN_RAW_EVENT_RETENTION_DAYS`: 0..=36500.
fn retention_days(env: &dyn Env) -> Result<i32, ConfigError> {
    let days: i32 = parsed(env, "CAIRN_RAW_EVENT_RETENTION_DAYS", 0)?;
    if !(0..=36_500).contains(&days) {
        return Err(ConfigError::Invalid {
            name: "CAIRN_RAW_EVENT_RETENTION_DAYS",
            value: days.to_string(),
            reason: "must be 0 (for ever) to 36500 days".into(),
        });
    }
    Ok(days)
}

/// `CAIRN_LIVENESS_FILE`, else [`DEFAULT_LIVENESS_FILE`].
pub fn liveness_file(env: &dyn Env) -> PathBuf {
    env.get("CAIRN_LIVENESS_FILE")
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_LIVENESS_FILE.into())
        .into()
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "generator".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_heartbeat_below_lease() {
        let cfg = GeneratorConfig::from_env(&[("CAIRN_DATABASE_URL", "postgres://x/y")]).unwrap();
        assert_eq!(cfg.workers, 4);
        assert_eq!(cfg.lease, Duration::from_secs(60));
        assert_eq!(cfg.heartbeat, Duration::from_secs(20));
        let err = GeneratorConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://x/y"),
            ("CAIRN_LEASE_MS", "1000"),
            ("CAIRN_HEARTBEAT_MS", "1000"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("CAIRN_HEARTBEAT_MS"), "{err}");
        let err =
            GeneratorConfig::from_env(&[("CAIRN_DATABASE_URL", "postgres://x/y"), ("CAIRN_WORKERS", "0")])
                .unwrap_err();
        assert!(err.to_string().contains("CAIRN_WORKERS"), "{err}");
    }
}
