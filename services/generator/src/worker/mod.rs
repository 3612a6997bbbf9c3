//! The generator process: `CAIRN_WORKERS` worker tasks claiming jobs, fed by
//! two kinds of hint — Redis wake-ups naming a job (`wakeups`) and the
//! Postgres sweeper (`sweeper`), which also rescues expired leases — and
//! draining on shutdown (`run`). A worker task that dies anyway (a panic
//! past every guard) is started again (`supervise`).

mod heartbeat;
mod pool;
mod sweeper;
mod wakeups;

use std::{collections::HashMap, future::Future, sync::Arc, time::Duration};

use cairn_shared::db;
use sqlx::PgPool;
use tokio::{
    sync::{Mutex, mpsc},
    task::JoinSet,
};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use cairn_core::generation::{
    Generator, Settings,
    provider::{Provider, build_provider},
};

use crate::{config::GeneratorConfig, publish::LivePublisher};

/// What every worker shares: the library's generator (pool, provider,
/// embedder, notices) and this process's configuration.
pub struct Context {
    pub generator: Generator,
    pub config: GeneratorConfig,
}

impl std::ops::Deref for Context {
    type Target = Generator;
    fn deref(&self) -> &Generator {
        &self.generator
    }
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

/// How long a dead worker's replacement waits before it claims: a panic
/// that recurs at once must not spin.
const RESTART_PAUSE: Duration = Duration::from_secs(1);

/// Runs until `shutdown` is cancelled, then stops claiming, lets in-flight
/// jobs finish for up to the drain timeout, releases the rest, and returns.
pub async fn run(config: GeneratorConfig, shutdown: CancellationToken) -> anyhow::Result<()> {
    let provider = build_provider(&config.provider)?;
    run_with(config, provider, shutdown).await
}

/// [`run`] with a provider of the caller's (tests use one that misbehaves).
pub async fn run_with(
    config: GeneratorConfig,
    provider: Arc<dyn Provider>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let pool = db::connect(&config.store).await?;
    if !wait_for_schema(&pool, &shutdown).await? {
        return Ok(());
    }
    let provider = cairn_core::generation::budget::guard(provider, pool.clone());
    tracing::info!(
        provider = provider.name(),
        model = provider.model(),
        workers = config.workers,
        worker_id = %config.worker_prefix,
        "cairn-generator started"
    );
    let live = LivePublisher::new(&config.store.redis_url, Duration::from_millis(500))?;
    let embedder = cairn_embed::Embedder::from_config(&config.embed);
    if let Some(embedder) = &embedder {
        tokio::spawn(cairn_core::generation::embed::backfill(
            pool.clone(),
            embedder.clone(),
            shutdown.clone(),
        ));
    }
    let settings = Settings {
        budget: config.budget,
        retry: config.retry,
        max_output_tokens: config.provider.max_output_tokens(),
        lease: config.lease,
    };
    let generator = Generator {
        pool,
        provider,
        embedder,
        settings,
        notices: Arc::new(live),
    };
    let ctx = Arc::new(Context { generator, config });

    let (hint_tx, hint_rx) = mpsc::channel(ctx.config.workers * 4);
    let hints: Hints = Arc::new(Mutex::new(hint_rx));
    // `shutdown` stops claiming; `abort` stops in-flight jobs once the drain deadline passes.
    let abort = CancellationToken::new();
    let sweeper = tokio::spawn(sweeper::sweep(ctx.clone(), hint_tx.clone(), shutdown.clone()));
    let wakeups = tokio::spawn(wakeups::consume(ctx.clone(), hint_tx, shutdown.clone()));
    let start = |index: usize| {
        let worker = format!("{}:{index}", ctx.config.worker_prefix);
        pool::work(
            ctx.clone(),
            worker,
            hints.clone(),
            shutdown.clone(),
            abort.clone(),
        )
    };
    let mut tasks = supervise(ctx.config.workers, start, &shutdown, RESTART_PAUSE).await;

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

/// Keeps `count` workers running until `shutdown` is cancelled: one that
/// ends before then (it panicked past every guard, or returned) is started
/// again under the same index after `pause`. Returns the running workers,
/// for the drain.
async fn supervise<F, W>(count: usize, start: F, shutdown: &CancellationToken, pause: Duration) -> JoinSet<()>
where
    F: Fn(usize) -> W,
    W: Future<Output = ()> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    let mut indices = HashMap::new();
    for index in 0..count {
        indices.insert(tasks.spawn(start(index)).id(), index);
    }
    loop {
        let joined = tokio::select! {
            _ = shutdown.cancelled() => return tasks,
            Some(joined) = tasks.join_next_with_id() => joined,
        };
        let (id, why) = match joined {
            Ok((id, ())) => (id, "returned".to_string()),
            Err(e) => {
                let id = e.id();
                match e.try_into_panic() {
                    Ok(panic) => (
                        id,
                        format!(
                            "panicked: {}",
                            cairn_core::generation::job::panic_message(panic.as_ref())
                        ),
                    ),
                    Err(e) => (id, e.to_string()),
                }
            }
        };
        let Some(index) = indices.remove(&id) else {
            continue;
        };
        if shutdown.is_cancelled() {
            return tasks;
        }
        tracing::error!(worker = index, %why, "worker stopped unexpectedly; starting it again");
        let worker = start(index);
        let restarted = tasks.spawn(async move {
            tokio::time::sleep(pause).await;
            worker.await;
        });
        indices.insert(restarted.id(), index);
    }
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

#[cfg(test)]
mod tests {
    use std::{
        sync::{
            Arc,
            atomic::{AtomicUsize, Ordering},
        },
        time::{Duration, Instant},
    };

    use tokio_util::sync::CancellationToken;

    use super::supervise;

    #[tokio::test]
    async fn a_worker_that_dies_is_started_again() {
        let shutdown = CancellationToken::new();
        let runs = Arc::new(AtomicUsize::new(0));
        // Worker 1 panics on its first run and returns on its second; its third serves.
        let start = {
            let (runs, shutdown) = (runs.clone(), shutdown.clone());
            move |index: usize| {
                let (runs, shutdown) = (runs.clone(), shutdown.clone());
                async move {
                    if index == 1 {
                        match runs.fetch_add(1, Ordering::SeqCst) {
                            0 => panic!("a worker bug"),
                            1 => return,
                            _ => {}
                        }
                    }
                    shutdown.cancelled().await;
                }
            }
        };
        let supervisor = {
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                supervise(2, start, &shutdown, Duration::from_millis(10))
                    .await
                    .len()
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while runs.load(Ordering::SeqCst) < 3 {
            assert!(Instant::now() < deadline, "worker 1 was not restarted twice");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        shutdown.cancel();
        // The workers end with the shutdown; none is started again after it.
        let left = supervisor.await.unwrap();
        assert!(left <= 2, "{left}");
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }
}
