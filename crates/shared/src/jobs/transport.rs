//! How a job reached the generators, as ingest answers report it.

use serde::{Deserialize, Serialize};

/// How a job reached the generators, as reported on ingest answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// A wake-up was pushed to Redis.
    Enqueued,
    /// Redis did not take it; the sweeper will find the row.
    QueuedOnly,
    /// The job is not runnable yet (its turn is still open) or no job was made.
    Skipped,
}
