//! What ingest tells telemetry: the event counters, and the trace context
//! kept on the event's outbox job so the generator continues the trace.

use cairn_shared::jobs::state_machine;
use cairn_telemetry::names;
use sqlx::PgConnection;

use super::IncomingEvent;
use crate::store::jobs::JobRow;

/// Counts a stored event by agent and kind, and a spool replay apart.
pub fn stored(ev: &IncomingEvent) {
    let agent = ev.source_adapter.clone();
    metrics::counter!(names::INGEST_EVENTS, "agent" => agent.clone(), "kind" => format!("{:?}", ev.kind))
        .increment(1);
    if ev.metadata.get("replayed") == Some(&serde_json::Value::Bool(true)) {
        metrics::counter!(names::INGEST_REPLAYED_EVENTS, "agent" => agent).increment(1);
    }
}

/// Keeps the current span's `traceparent` on the job (the first event's, for a coalesced turn).
pub async fn link_trace(conn: &mut PgConnection, job: Option<&JobRow>) -> sqlx::Result<()> {
    if let (Some(job), Some(traceparent)) = (job, cairn_telemetry::otel::current_traceparent()) {
        state_machine::set_traceparent(conn, job.id, &traceparent).await?;
    }
    Ok(())
}
