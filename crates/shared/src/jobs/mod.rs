//! Generation jobs: their types and states, the state machine that alone
//! changes a job's status, and the Redis wake-up that tells a generator a job
//! is ready. The row in Postgres is the truth; a wake-up is a hint.

pub mod state_machine;
mod status;
mod wakeup;

pub use status::{JobStatus, JobType};
pub use wakeup::{JobWakeup, Transport, WakeupPublisher, wakeup_config, wakeup_queue_name};
