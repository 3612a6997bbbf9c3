//! The ingest path: adapters turn an agent's or a client's request into an
//! `IncomingEvent`; the pipeline filters it for privacy, then writes session,
//! event and outbox job atomically (a tool call of a known session in a batch
//! with others, one call and one commit, `turn_event.rs` and
//! `group_commit.rs`; else one transaction) and, after commit, tells the
//! engine's [`Wake`](crate::engine::Wake) which jobs became due (the server
//! pushes a Redis wake-up; an embedding program generates inline).

pub mod agents;
mod event;
mod group_commit;
mod observe;
mod pipeline;
mod plan;
mod plan_capture;
mod turn_event;
mod write;

pub use event::{Actor, EventKind, IncomingEvent, SessionTarget, idempotency_key_from_body};
pub use group_commit::GroupCommit;
pub use pipeline::{Outcome, Skipped, ingest_batch, ingest_one, publish};
pub use plan::JobPlan;

/// How tool events are grouped into one observation job per turn.
#[derive(Clone, Debug)]
pub struct Coalescing {
    /// A turn's job is sealed and made runnable at this many events.
    pub max_turn_events: i32,
    /// A turn with no Stop becomes runnable this long after its last event.
    pub turn_idle: std::time::Duration,
}

impl Default for Coalescing {
    /// The server's defaults (`CAIRN_MAX_TURN_EVENTS`, `CAIRN_TURN_IDLE_MS`).
    fn default() -> Self {
        Self {
            max_turn_events: 50,
            turn_idle: std::time::Duration::from_millis(120_000),
        }
    }
}
