//! The sweeper: Postgres alone keeps the generator working. Every
//! `CAIRN_SWEEP_MS` it rescues jobs whose lease expired, fails queued jobs
//! with no attempts left, and wakes idle workers when due jobs are waiting — jobs whose wake-up was lost (Redis
//! down or flushed) and jobs whose `next_attempt_at` has come. Every
//! `CAIRN_IDLE_CHECK_MS` it also ends sessions left idle (`cairn_core::sessions::end`),
//! and every `CAIRN_UPKEEP_MS` (the first time one interval after start) it consolidates and archives memories (`cairn_core::upkeep`);
//! every `CAIRN_RETENTION_CHECK_MS` it sheds raw events past retention (`store::retention`).

use std::{sync::Arc, time::Duration};

use cairn_core::store::queue;
use cairn_shared::jobs::state_machine;
use rand::Rng;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Context, Hint};

/// Upkeep batches per pass, at most: a backlog is worked off over several passes.
const UPKEEP_ROUNDS: usize = 20;

pub async fn sweep(ctx: Arc<Context>, hints: mpsc::Sender<Hint>, shutdown: CancellationToken) {
    let actor = format!("rescuer:{}", ctx.config.worker_prefix);
    let mut idle_checked: Option<std::time::Instant> = None;
    // Upkeep's first pass comes one interval after start, as its setting
    // says: a restart (or a crash loop, or a test that sets it high) does
    // not consolidate at once. Partitions and idle sessions are due at once.
    let mut upkept = std::time::Instant::now();
    let mut retained: Option<std::time::Instant> = None;
    loop {
        // Jitter keeps several generators from sweeping in step.
        let pause = ctx
            .config
            .sweep_interval
            .mul_f64(rand::rng().random_range(0.8..=1.2));
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
        if idle_checked.is_none_or(|at| at.elapsed() >= ctx.config.idle_check) {
            idle_checked = Some(std::time::Instant::now());
            match cairn_core::sessions::end::end_idle(&ctx.pool, ctx.config.idle_session).await {
                Ok(ended) if ended.sessions > 0 => tracing::info!(?ended, "ended idle sessions"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "ending idle sessions failed"),
            }
        }
        if upkept.elapsed() >= ctx.config.upkeep {
            upkept = std::time::Instant::now();
            match cairn_core::upkeep::run(&ctx.pool, &actor, UPKEEP_ROUNDS).await {
                Ok(pass) if pass.merged + pass.archived > 0 => tracing::info!(?pass, "memory upkeep"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "memory upkeep failed"),
            }
        }
        if retained.is_none_or(|at| at.elapsed() >= ctx.config.retention_check) {
            retained = Some(std::time::Instant::now());
            shed_raw_events(&ctx).await;
        }
        if let Err(e) = sweep_once(&ctx, &actor, &hints).await {
            tracing::warn!(error = %e, "sweep failed");
        }
    }
}

/// Weekly partitions made ahead, raw events past retention shed.
async fn shed_raw_events(ctx: &Context) {
    match ctx.pool.acquire().await {
        Ok(mut conn) => {
            if let Err(e) = cairn_shared::db::ensure_partitions(&mut conn).await {
                tracing::warn!(error = %e, "creating the weekly partitions failed");
            }
        }
        Err(e) => tracing::warn!(error = %e, "creating the weekly partitions failed"),
    }
    let days = ctx.config.raw_event_retention_days;
    match cairn_core::store::retention::run(&ctx.pool, days, chrono::Utc::now()).await {
        Ok(shed) if shed != Default::default() => tracing::info!(?shed, "raw-event retention"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "raw-event retention failed"),
    }
}

async fn sweep_once(ctx: &Context, actor: &str, hints: &mpsc::Sender<Hint>) -> sqlx::Result<()> {
    let rescued = state_machine::rescue_expired(&ctx.pool, actor, Duration::ZERO, 100).await?;
    for job in &rescued {
        tracing::warn!(job_id = %job.id, previous_owner = %job.previous_owner, status = job.status.as_str(),
            "rescued a job whose lease expired");
    }
    for id in state_machine::fail_exhausted(&ctx.pool, actor, 100).await? {
        tracing::warn!(job_id = %id, "failed a queued job whose attempts are used up");
    }
    let due = queue::due_count(&ctx.pool, ctx.config.workers as i64).await?;
    for _ in 0..due {
        // A full channel means every worker already has something to do.
        if hints.try_send(Hint::Sweep).is_err() {
            break;
        }
    }
    queue_gauges(ctx).await
}

/// Refreshes the queue gauges (jobs by status, oldest due age) and the pool
/// gauges: once per sweep, so a scrape never queries Postgres.
#[tracing::instrument(skip_all)]
async fn queue_gauges(ctx: &Context) -> sqlx::Result<()> {
    use cairn_telemetry::names;
    let counts = queue::count_by_status(&ctx.pool).await?;
    for status in ["queued", "processing", "completed", "failed", "cancelled"] {
        let n = counts.iter().find(|(s, _)| s == status).map_or(0, |(_, n)| *n);
        metrics::gauge!(names::QUEUE_DEPTH, "status" => status).set(n as f64);
    }
    let oldest = queue::oldest_due_seconds(&ctx.pool).await?;
    metrics::gauge!(names::QUEUE_OLDEST_DUE).set(oldest.unwrap_or(0.0).max(0.0));
    cairn_telemetry::prom::record_pool(&ctx.pool, "generator");
    Ok(())
}
