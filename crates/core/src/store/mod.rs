//! Database reads and writes of the API, one file per table. Every query is
//! scoped by team (and project where the caller is project-scoped).

pub mod code;
pub mod context;
pub mod events;
pub mod feedback;
pub mod file_memories;
pub mod jobs;
pub mod memory_digest;
pub mod observations;
pub mod plans;
pub mod purge;
pub mod queue;
pub mod retrievals;
pub mod session_views;
pub mod sessions;
pub mod transfer;
pub mod usage;
