//! `cairn-core`: Cairn's memory engine as a library. The server's binaries
//! (`cairn-api`, `cairn-generator`) are transports over it; a Rust program
//! can embed it against its own Postgres, with no HTTP service, no Redis and
//! no worker process.
//!
//! The internal graph, by folder:
//! - `ingest`: an agent's hook payload → privacy filter → session, event and
//!   outbox job in one transaction (idempotent);
//! - `generation`: a claimed job → prompt → provider → parse → observations
//!   and summaries, through the job state machine (`cairn_shared::jobs`);
//! - `memory`: the memory lifecycle (states, transitions, their log);
//! - `sessions`: how turns and sessions end, for every path that ends one;
//! - `search` and `context`: retrieval and the context builder;
//! - `store`: the SQL of each table or aggregate;
//! - `engine`: the handle they share; `tenancy`: what every call names;
//! - `client`: [`Cairn`], the engine for an embedding program.

pub mod client;
pub mod context;
pub mod engine;
pub mod error;
pub mod generation;
pub mod ingest;
pub mod memory;
pub mod search;
pub mod sessions;
pub mod store;
pub mod tenancy;
pub mod upkeep;

pub use client::Cairn;
pub use engine::Engine;
pub use error::{Error, Result};
