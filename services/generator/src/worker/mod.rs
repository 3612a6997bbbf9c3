//! The generator process: `CAIRN_WORKERS` worker tasks claiming jobs, fed by
//! two kinds of hint — Redis wake-ups naming a job (`wakeups`) and the
//! Postgres sweeper (`sweeper`), which also rescues expired leases — and
//! draining on shutdown (`run`).

mod heartbeat;
mod pool;
mod sweeper;
mod wakeups;

use std::{sync::Arc, time::Duration};

use cairn_shared::db;
use sqlx::PgPool;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{
    config::GeneratorConfig,
    provider::{Provider, build_provider},
    publish::LivePublisher,
};

/// What every worker shares.
pub struct Context {
    pub pool: PgPool,
    pub provider: Arc<dyn Provider>,
    pub live: LivePublisher,
    pub config: GeneratorConfig,
}

/// Why a worker should look for work now.
#[derive(Clone, Copy, Debug)]
pub enum Hint {
    /// A wake-up named this job.
    Job(Uuid),
    /// The sweeper saw due jobs.
    Sweep,
}

type Hints = Arc<Mutex<mpsc::Receiver<Hint>>>;

/// Runs until `shutdown` is cancelled, then stops claiming, lets in-flight
/// jobs finish for up to the drain timeout, releases the rest, and returns.
pub async fn run(config: GeneratorConfig, shutdown: CancellationToken) -> anyhow::Result<()> {
    let pool = db::connect(&config.store).await?;
    if !wait_for_schema(&pool, &shutdown).await? {
        return Ok(());
    }
    let provider = build_provider(&config.provider)?;
    tracing::info!(
        provider = provider.name(),
        model = provider.model(),
        workers = config.workers,
        worker_id = %config.worker_prefix,
        "cairn-generator started"
    );
    let live = LivePublisher::new(&config.store.redis_url, Duration::from_millis(500))?;
    let ctx = Arc::new(Context {
        pool,
        provider,
        live,
        config,
    });

    let (hint_tx, hint_rx) = mpsc::channel(ctx.config.workers * 4);
    let hints: Hints = Arc::new(Mutex::new(hint_rx));
    // `shutdown` stops claiming; `abort` stops in-flight jobs once the drain deadline passes.
    let abort = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..ctx.config.workers {
        let worker = format!("{}:{index}", ctx.config.worker_prefix);
        tasks.spawn(pool::work(
            ctx.clone(),
            worker,
            hints.clone(),
            shutdown.clone(),
            abort.clone(),
        ));
    }
    let sweeper = tokio::spawn(sweeper::sweep(ctx.clone(), hint_tx.clone(), shutdown.clone()));
    let wakeups = tokio::spawn(wakeups::consume(ctx.clone(), hint_tx, shutdown.clone()));

    shutdown.cancelled().await;
    tracing::info!(deadline = ?ctx.config.drain_timeout, "stopping: no new claims; draining in-flight jobs");
    let drained = tokio::time::timeout(ctx.config.drain_timeout, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!("drain deadline passed: releasing the jobs still running");
        abort.cancel();
        while tasks.join_next().await.is_some() {}
    }
    let _ = tokio::join!(sweeper, wakeups);
    ctx.pool.close().await;
    tracing::info!("cairn-generator stopped");
    Ok(())
}

/// The API applies migrations; the generator waits for them rather than racing.
/// False when shutdown came first.
async fn wait_for_schema(pool: &PgPool, shutdown: &CancellationToken) -> anyhow::Result<bool> {
    let mut waited = 0u32;
    while !db::check_schema(pool).await? {
        if waited.is_multiple_of(10) {
            tracing::info!("waiting for cairn-api to apply the database migrations");
        }
        waited += 1;
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(false),
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
    Ok(true)
}
