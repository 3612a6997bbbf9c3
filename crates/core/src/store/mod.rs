//! Database reads and writes of the engine, one file per table or aggregate. Every query is
//! scoped by team (and project where the caller is project-scoped).

pub mod code;
pub mod context;
pub mod embeddings;
pub mod erasure;
pub mod events;
pub mod feedback;
pub mod file_memories;
pub mod jobs;
pub mod material;
pub mod memory_digest;
pub mod observations;
pub mod plans;
pub mod purge;
pub mod queue;
pub mod retention;
pub mod retrievals;
pub mod search;
pub mod session_views;
pub mod sessions;
pub mod timeline;
pub mod transfer;
pub mod turn_events;
pub mod usage;
pub mod visibility;
