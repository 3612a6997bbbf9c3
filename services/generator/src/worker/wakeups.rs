//! Wake-ups from Redis, consumed through apalis: each names a job the API
//! just made due, passed on to an idle worker as a hint. A lost or failed
//! wake-up costs latency only; while Redis is unreachable this loop retries
//! in the background and the sweeper carries the load.

use std::{sync::Arc, time::Duration};

use apalis::prelude::{BoxDynError, Data, WorkerBuilder};
use apalis_redis::RedisStorage;
use cairn_wakeup::{JobWakeup, redis_conn::lazy_connection, wakeup_config};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Context, Hint};

pub async fn consume(ctx: Arc<Context>, hints: mpsc::Sender<Hint>, shutdown: CancellationToken) {
    let name = format!("{}-wakeups", ctx.config.worker_prefix);
    let mut backoff = Duration::from_millis(500);
    while !shutdown.is_cancelled() {
        let conn = match lazy_connection(&ctx.config.store.redis_url, Duration::from_secs(2)) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "invalid Redis URL; wake-ups disabled, the sweeper carries on");
                return;
            }
        };
        let storage: RedisStorage<JobWakeup, _> =
            RedisStorage::new(conn).with_config(wakeup_config().heartbeat_interval(ctx.config.wakeup_poll));
        let worker = WorkerBuilder::new(name.clone())
            .backend(storage)
            .data(hints.clone())
            .build(forward);
        let stop = shutdown.clone();
        let stopped = async move {
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        };
        match worker.run_until(stopped).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "wake-up consumer stopped; reconnecting");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// Hands the job id to an idle worker. When every worker is busy the hint is
/// dropped: a busy worker claims the next due job anyway when it finishes.
async fn forward(wakeup: JobWakeup, hints: Data<mpsc::Sender<Hint>>) -> Result<(), BoxDynError> {
    if hints.try_send(Hint::Job(wakeup.job_id)).is_err() {
        tracing::debug!(job_id = %wakeup.job_id, "all workers busy; wake-up left to the sweep");
    }
    Ok(())
}
