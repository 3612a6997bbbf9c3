//! Inline generation: the project's due jobs are claimed, generated and
//! completed in this process, through the same state machine and the same
//! code as the server's workers (queued → processing → completed, or a
//! later attempt, or failed) — never queued → completed. The provider is
//! called in-process; no Redis, no worker.

use cairn_shared::jobs::state_machine::{self, ClaimTarget};

use super::Cairn;
use crate::{
    error::Error,
    generation::job::{self, Finished},
};

/// Jobs claimed at once.
const CLAIM: i64 = 8;

/// What one [`Cairn::generate`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generated {
    /// Jobs completed, and the observations and summaries they wrote.
    pub completed: usize,
    pub rows: usize,
    /// Jobs sent back for a later attempt (a provider's 429 or 5xx, say).
    pub retrying: usize,
    pub failed: usize,
}

impl Cairn {
    /// Generates every job of the project that is due now, until none is.
    /// A turn's jobs are due once its Stop arrived (or it went idle); a
    /// session's summary once it ended. A job whose provider failed waits
    /// for its next attempt (the next call after its time).
    pub async fn generate(&self) -> Result<Generated, Error> {
        let mut done = Generated::default();
        loop {
            let claimed = state_machine::claim(
                &self.engine.pool,
                &self.worker,
                self.generator.settings.lease,
                ClaimTarget::ProjectDue(self.project.id, CLAIM),
            )
            .await?;
            if claimed.is_empty() {
                return Ok(done);
            }
            for claimed in &claimed {
                let prepared = job::prepare(&self.generator, claimed).await;
                match job::finish(&self.generator, claimed, &self.worker, prepared).await {
                    Finished::Completed { rows } => {
                        done.completed += 1;
                        done.rows += rows;
                    }
                    Finished::Retrying => done.retrying += 1,
                    Finished::Failed => done.failed += 1,
                    // Not ours any more, or the database failed: the lease
                    // expires and the job is claimed again.
                    Finished::Refused | Finished::Abandoned => {
                        return Err(Error::unavailable("a job's outcome could not be recorded; retry"));
                    }
                }
            }
        }
    }
}
