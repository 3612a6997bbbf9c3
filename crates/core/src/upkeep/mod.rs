//! Memory upkeep, run by the sweeper every `CAIRN_UPKEEP_MS`: near-duplicate
//! observations are merged (`lifecycle::merge`) and memories past their
//! project's retention policy are archived (`lifecycle::archive`); private
//! memories of a `private-first` project nobody objected to within its days
//! are promoted (`store::visibility`). The first two are single
//! statements that lock what they change (`FOR UPDATE SKIP LOCKED`), so
//! several generators may run them at once, and both record each change in
//! `memory_changes`, from which the API reverts it (migrations 0014, 0017).

use sqlx::PgPool;

use crate::memory::lifecycle::{archive, merge};

/// What one pass changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Observations compared with their project's older ones.
    pub checked: i64,
    /// Observations merged into a newer near-duplicate.
    pub merged: i64,
    /// Observations archived by a retention policy.
    pub archived: i64,
    /// Private memories promoted by their project's "no objection within N days".
    pub promoted: u64,
}

/// Consolidates and archives until nothing is left to check, or `max_rounds` batches.
pub async fn run(pool: &PgPool, actor: &str, max_rounds: usize) -> sqlx::Result<Pass> {
    let mut pass = Pass::default();
    for _ in 0..max_rounds {
        let c = merge::once(pool, actor).await?;
        pass.checked += c.checked;
        pass.merged += c.merged;
        if c.checked < merge::BATCH {
            break;
        }
    }
    for _ in 0..max_rounds {
        let archived = archive::once(pool, actor).await?;
        pass.archived += archived;
        if archived < archive::BATCH {
            break;
        }
    }
    pass.promoted = crate::store::visibility::promote_unopposed(pool).await?;
    Ok(pass)
}
