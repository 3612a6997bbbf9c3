//! What a job is made from: its already-filtered agent events, loaded from
//! Postgres by `job::load`, read by the prompt builder and by the heuristic
//! provider.

use cairn_shared::jobs::JobType;
use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

/// One stored agent event, as the ingest path kept it (privacy filter applied).
#[derive(Clone, Debug)]
pub struct EventRecord {
    /// The agent's own event name: `UserPromptSubmit`, `PostToolUse`,
    /// `PostToolUseFailure`, `Stop`, `SessionEnd`, …
    pub event_type: String,
    pub tool_name: Option<String>,
    pub prompt_number: Option<i32>,
    /// The hook JSON: `prompt`, `tool_input`, `tool_response`, `error`,
    /// `last_assistant_message`, … (claude-mem clients use the same names).
    pub payload: Value,
    pub occurred_at: DateTime<Utc>,
}

/// Everything one job needs, in event order.
#[derive(Clone, Debug)]
pub struct Material {
    pub job_id: Uuid,
    pub job_type: JobType,
    pub project: String,
    pub agent: Option<String>,
    pub cwd: Option<String>,
    /// The turn this job covers (observations and turn summaries).
    pub prompt_number: Option<i32>,
    /// - observations: the turn's prompt event (when stored) then the job's tool events;
    /// - turn_summary: every event of the turn;
    /// - session_summary: every event of the session (the builder digests them per turn).
    pub events: Vec<EventRecord>,
}
