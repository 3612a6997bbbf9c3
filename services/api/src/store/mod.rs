//! Database reads and writes of the API, one file per table. Every query is
//! scoped by team (and project where the caller is project-scoped).

pub mod events;
pub mod jobs;
pub mod observations;
pub mod sessions;
pub mod usage;
