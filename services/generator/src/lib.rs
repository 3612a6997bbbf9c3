//! `cairn-generator`: the worker process over `cairn-core`'s generation.
//! Workers claim generation jobs through the state machine (`worker`: claim,
//! heartbeat, finish, the sweeper and the Redis wake-ups), hand each to
//! `cairn_core::generation::job` (load → prompt → provider → parse → write),
//! and publish live notices on Redis (`publish`).

pub mod config;
pub mod publish;
pub mod worker;

// What the worker runs, under the names it had before it became the library's.
pub use cairn_core::{
    generation::{budget, embed, job, material, parse, prompt, provider, retry},
    upkeep,
};
