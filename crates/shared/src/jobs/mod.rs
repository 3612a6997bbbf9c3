//! Generation jobs: their types and states, and the state machine that
//! alone changes a job's status. The row in Postgres is the truth; the Redis wake-up
//! (`cairn-wakeup`) is a hint.

pub mod state_machine;
mod status;
mod transport;

pub use status::{JobStatus, JobType};
pub use transport::Transport;
