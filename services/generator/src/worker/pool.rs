//! One worker: claim a due job (greedily, while there are any), run it with
//! a heartbeat, record its outcome; when idle, wait for a hint. A panic
//! anywhere from claim to outcome is caught: the job is failed through the
//! state machine and the worker goes on to the next one.

use std::{panic::AssertUnwindSafe, sync::Arc, time::Duration};

use futures::FutureExt;

use cairn_shared::jobs::state_machine::{self, ClaimTarget, ClaimedJob, Transition};
use tokio_util::sync::CancellationToken;

use super::{Context, Hint, Hints, heartbeat};
use cairn_core::generation::job::{self, Finished};

pub async fn work(
    ctx: Arc<Context>,
    worker: String,
    hints: Hints,
    shutdown: CancellationToken,
    abort: CancellationToken,
) {
    let mut target = ClaimTarget::AnyDue(1);
    while !shutdown.is_cancelled() {
        let claim = AssertUnwindSafe(state_machine::claim(&ctx.pool, &worker, ctx.config.lease, target))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| {
                // Nothing was claimed that we know of; an unseen claim's lease expires.
                Err(sqlx::Error::Protocol(format!(
                    "claim panicked: {}",
                    job::panic_message(panic.as_ref())
                )))
            });
        match claim {
            Ok(jobs) if !jobs.is_empty() => {
                for claimed in jobs {
                    run_one(&ctx, &worker, &claimed, &abort).await;
                }
                target = ClaimTarget::AnyDue(1);
                continue;
            }
            // The named job was taken or is not due: look for any other before idling.
            Ok(_) if matches!(target, ClaimTarget::Job(_)) => {
                target = ClaimTarget::AnyDue(1);
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "claim failed; retrying shortly");
                tokio::time::sleep(Duration::from_secs(1)).await;
                target = ClaimTarget::AnyDue(1);
                continue;
            }
        }
        let hint = tokio::select! {
            _ = shutdown.cancelled() => break,
            hint = async { hints.lock().await.recv().await } => hint,
        };
        target = match hint {
            Some(Hint::Job(id)) => ClaimTarget::Job(id),
            Some(Hint::Sweep) => ClaimTarget::AnyDue(1),
            None => break,
        };
    }
}

/// Runs one claimed job to its outcome. A panic while recording it (or in
/// the heartbeat) fails the job through the state machine, as a panic in the
/// provider or parser does.
async fn run_one(ctx: &Context, worker: &str, claimed: &ClaimedJob, abort: &CancellationToken) {
    let attempt = AssertUnwindSafe(attempt(ctx, worker, claimed, abort)).catch_unwind();
    if let Err(panic) = attempt.await {
        let what = job::panic_message(panic.as_ref());
        tracing::error!(job_id = %claimed.id, worker, panic = %what, "job panicked; failing it");
        let finished = job::fail_panicked(ctx, claimed, worker, &what).await;
        tracing::debug!(job_id = %claimed.id, ?finished, "panicked job settled");
    }
}

async fn attempt(ctx: &Context, worker: &str, claimed: &ClaimedJob, abort: &CancellationToken) {
    let started = std::time::Instant::now();
    // A panic in provider or parser code fails this job, with the usage known so far.
    let guarded = AssertUnwindSafe(job::prepare(ctx, claimed)).catch_unwind();
    let prepared = tokio::select! {
        prepared = guarded => prepared.unwrap_or_else(|panic| job::Prepared::panicked(claimed, panic)),
        _ = heartbeat::until_lost(ctx, claimed.id, worker) => {
            tracing::warn!(job_id = %claimed.id, worker, "lease lost while working; dropping the job");
            return;
        }
        _ = abort.cancelled() => {
            release(ctx, worker, claimed).await;
            return;
        }
    };
    let finished = job::finish(ctx, claimed, worker, prepared).await;
    tracing::debug!(job_id = %claimed.id, ?finished, elapsed_ms = started.elapsed().as_millis() as u64, "job done");
    if let Finished::Completed { rows } = finished {
        tracing::info!(job_id = %claimed.id, job_type = %claimed.job_type, rows, "job completed");
    }
}

/// Shutdown deadline passed: hand the job back without counting the attempt.
async fn release(ctx: &Context, worker: &str, claimed: &ClaimedJob) {
    let result = async {
        let mut conn = ctx.pool.acquire().await?;
        state_machine::apply(
            &mut conn,
            claimed.project_id,
            claimed.id,
            Transition::Release { worker },
        )
        .await
    }
    .await;
    match result {
        Ok(_) => tracing::info!(job_id = %claimed.id, "released for another worker"),
        Err(e) => tracing::warn!(job_id = %claimed.id, error = %e, "release failed; its lease will expire"),
    }
}
