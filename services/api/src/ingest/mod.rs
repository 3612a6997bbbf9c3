//! The ingest path: adapters turn an agent's or a client's request into an
//! `IncomingEvent`; the pipeline filters it for privacy, then writes session,
//! event and outbox job in one transaction and publishes wake-ups after commit.

pub mod agents;
mod event;
mod observe;
mod pipeline;
mod plan;
mod plan_capture;
mod write;

pub use event::{EventKind, IncomingEvent, SessionTarget, idempotency_key_from_body};
pub use pipeline::{Outcome, Skipped, ingest_batch, ingest_one, publish};
pub use plan::JobPlan;
