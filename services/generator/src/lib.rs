//! `cairn-generator`: workers that claim generation jobs through the state
//! machine, build a prompt from the job's events, ask a provider, parse its
//! answer and write observations and summaries back.
//!
//! The path of one job: `worker` (claim, heartbeat, finish) → `job::load`
//! (the job's material) → `prompt` → `provider` → `parse` → `job::write`
//! (rows and `processing → completed` in one transaction) → `publish`.

pub mod budget;
pub mod config;
pub mod embed;
pub mod job;
pub mod material;
pub mod parse;
pub mod prompt;
pub mod provider;
pub mod publish;
pub mod retry;
pub mod upkeep;
pub mod worker;
