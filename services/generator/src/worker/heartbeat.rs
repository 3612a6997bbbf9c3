//! Keeps a running job's lease alive while the provider works; returns only
//! when the lease is lost (rescued or cancelled), so the caller can drop the job.

use std::time::Duration;

use cairn_shared::jobs::state_machine;
use uuid::Uuid;

use super::Context;

pub async fn until_lost(ctx: &Context, job_id: Uuid, worker: &str) {
    loop {
        tokio::time::sleep(ctx.config.heartbeat).await;
        match state_machine::heartbeat(&ctx.pool, job_id, worker, ctx.config.lease).await {
            Ok(true) => {}
            Ok(false) => return,
            // A database blip: try again; if it lasts, the lease expires and the completion is refused.
            Err(e) => {
                tracing::warn!(%job_id, error = %e, "heartbeat failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}
