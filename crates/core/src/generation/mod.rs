//! Generation: a claimed job's events become observations and summaries.
//!
//! The path of one job: `job::load` (the job's material) → `prompt` →
//! `provider` → `parse` → `job::write` (rows and `processing → completed` in
//! one transaction) → `notices`. Who claims the job — the server's worker
//! pool or [`crate::Cairn::generate`] inline — is the caller's business; the
//! state machine is the same.

pub mod budget;
pub mod embed;
pub mod job;
pub mod material;
pub mod notices;
pub mod parse;
pub mod prompt;
pub mod provider;
pub mod retry;

use std::{sync::Arc, time::Duration};

use sqlx::PgPool;

use self::{notices::Notices, prompt::Budget, provider::Provider, retry::RetryPolicy};

/// How jobs are generated, whoever claims them.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How much of a job's events a prompt may carry.
    pub budget: Budget,
    /// When a failed attempt is tried again.
    pub retry: RetryPolicy,
    /// The most a provider may answer, in tokens.
    pub max_output_tokens: u32,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
}

/// What every job's attempt needs: the database, the model, the embedder
/// for what it writes, and where its notices go.
#[derive(Clone)]
pub struct Generator {
    pub pool: PgPool,
    pub provider: Arc<dyn Provider>,
    /// Embeds what jobs write; `None` when embeddings are off or the model is missing.
    pub embedder: Option<cairn_embed::Embedder>,
    pub settings: Settings,
    pub notices: Arc<dyn Notices>,
}
