//! What a job is made from: its agent events, loaded from Postgres by
//! `job::load`, read by the prompt builder and by the heuristic provider,
//! both of which first pass them through the privacy filter again
//! ([`Material::redacted`]).

use std::sync::LazyLock;

use cairn_shared::jobs::JobType;
use cairn_shared::privacy::{PrivacyConfig, PrivacyFilter};
use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

/// One stored agent event, as the ingest path kept it (privacy filter applied
/// with the rules of its day).
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

/// The filter the generator applies again, with today's rules: events stored
/// before a rule existed, or sent by an older hook client, must not leak
/// through a prompt or an observation. No size cap: the prompt builder has
/// its own budgets.
static FILTER: LazyLock<PrivacyFilter> = LazyLock::new(|| {
    PrivacyFilter::new(PrivacyConfig {
        max_field_bytes: usize::MAX,
        ..PrivacyConfig::default()
    })
});

impl Material {
    /// A copy with the privacy filter applied to every event's payload (any
    /// string at any depth: commands, outputs, prompts, messages) and tool
    /// name, and to the working directory. Filtering is idempotent, so
    /// events filtered at ingest come out unchanged.
    pub fn redacted(&self) -> Material {
        let text = |value: &str| FILTER.filter_text(value).0;
        let events = self
            .events
            .iter()
            .map(|event| {
                let mut payload = event.payload.clone();
                FILTER.filter_value(&mut payload);
                EventRecord {
                    event_type: event.event_type.clone(),
                    tool_name: event.tool_name.as_deref().map(text),
                    prompt_number: event.prompt_number,
                    payload,
                    occurred_at: event.occurred_at,
                }
            })
            .collect();
        Material {
            job_id: self.job_id,
            job_type: self.job_type,
            project: self.project.clone(),
            agent: self.agent.clone(),
            cwd: self.cwd.as_deref().map(text),
            prompt_number: self.prompt_number,
            events,
        }
    }
}
