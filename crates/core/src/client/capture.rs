//! Capturing: any agent's hook payload, or a typed event (made into Claude
//! Code's hook payload, the model every agent's events are stored in), goes
//! through the server's ingest path for the client's project.

use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use super::Cairn;
use crate::{
    error::Error,
    ingest::{
        self, Outcome, Skipped,
        agents::{HookAgent, HookRequest},
    },
};

/// One event to capture.
#[derive(Clone, Debug)]
pub struct Event {
    agent: HookAgent,
    payload: Value,
    idempotency_key: Option<String>,
}

impl Event {
    /// An agent's own hook payload: `agent` is `claude-code`, `cursor`,
    /// `codex`, `gemini` or `windsurf` (404 `unknown_agent` otherwise).
    pub fn hook(agent: &str, payload: Value) -> Result<Event, Error> {
        let agent = HookAgent::from_slug(agent).ok_or_else(|| {
            Error::not_found(
                "unknown_agent",
                format!(
                    "no adapter for agent `{agent}`; known: claude-code, cursor, codex, gemini, windsurf"
                ),
            )
        })?;
        Ok(Event {
            agent,
            payload,
            idempotency_key: None,
        })
    }

    fn claude_code(payload: Value) -> Event {
        Event {
            agent: HookAgent::ClaudeCode,
            payload,
            idempotency_key: None,
        }
    }

    /// A session starts in `cwd`.
    pub fn session_start(session: &str, cwd: &str) -> Event {
        Self::claude_code(
            json!({"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": cwd}),
        )
    }

    /// The user's prompt: a turn begins.
    pub fn prompt(session: &str, text: &str) -> Event {
        Self::claude_code(
            json!({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": text}),
        )
    }

    /// A tool ran: its name (`Read`, `Edit`, `Bash`, …), input and result.
    pub fn tool(session: &str, tool: &str, input: Value, response: Value) -> Event {
        Self::claude_code(json!({
            "session_id": session, "hook_event_name": "PostToolUse",
            "tool_name": tool, "tool_input": input, "tool_response": response,
        }))
    }

    /// The agent answered: the turn ends, with its final message.
    pub fn stop(session: &str, final_message: &str) -> Event {
        Self::claude_code(json!({
            "session_id": session, "hook_event_name": "Stop", "last_assistant_message": final_message,
        }))
    }

    /// The session ends; its summary is queued.
    pub fn session_end(session: &str) -> Event {
        Self::claude_code(json!({"session_id": session, "hook_event_name": "SessionEnd", "reason": "exit"}))
    }

    /// A retry with the same key stores nothing twice.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Event {
        self.idempotency_key = Some(key.into());
        self
    }
}

/// What capturing one event did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// The stored event; `None` when nothing was stored (`skipped`).
    pub event_id: Option<Uuid>,
    /// False for a duplicate: `event_id` is the one stored first.
    pub created: bool,
    pub session_id: Option<Uuid>,
    /// The generation job the event joined or made.
    pub job_id: Option<Uuid>,
    pub skipped: Option<Skipped>,
}

impl From<Outcome> for Captured {
    fn from(outcome: Outcome) -> Self {
        Captured {
            event_id: outcome.event.as_ref().map(|e| e.id),
            created: outcome.created,
            session_id: outcome.session.as_ref().map(|s| s.id),
            job_id: outcome.job.as_ref().map(|j| j.id),
            skipped: outcome.skipped,
        }
    }
}

impl Cairn {
    /// Stores one event: privacy filter, then session, event and outbox job
    /// in one transaction. Bad input is an error with a stable code (422
    /// `missing_field`, …); nothing already stored is lost.
    pub async fn capture(&self, event: Event) -> Result<Captured, Error> {
        let parsed = parse(&event)?;
        Ok(ingest::ingest_one(&self.engine, self.project, parsed)
            .await?
            .into())
    }

    /// Many events in one transaction (a duplicate undoes only itself).
    pub async fn capture_batch(&self, events: Vec<Event>) -> Result<Vec<Captured>, Error> {
        let parsed = events
            .iter()
            .map(|e| parse(e).map(|p| (self.project, p)))
            .collect::<Result<Vec<_>, _>>()?;
        let outcomes = ingest::ingest_batch(&self.engine, parsed).await?;
        Ok(outcomes.into_iter().map(Captured::from).collect())
    }

    /// Captures the event, then generates what became due.
    pub async fn capture_and_generate(&self, event: Event) -> Result<(Captured, super::Generated), Error> {
        let captured = self.capture(event).await?;
        Ok((captured, self.generate().await?))
    }

    /// `SessionStart` of `session` in `cwd`.
    pub async fn start_session(&self, session: &str, cwd: &str) -> Result<Captured, Error> {
        self.capture(Event::session_start(session, cwd)).await
    }

    /// `SessionEnd`: the open turn's jobs are sealed and the session's
    /// summary is queued (generated by the next [`Cairn::generate`]).
    pub async fn end_session(&self, session: &str) -> Result<Captured, Error> {
        self.capture(Event::session_end(session)).await
    }
}

fn parse(event: &Event) -> Result<ingest::IncomingEvent, Error> {
    let body = serde_json::to_vec(&event.payload).unwrap_or_default();
    let request = HookRequest {
        body: &body,
        idempotency_key: event.idempotency_key.as_deref(),
        occurred_at: Utc::now(),
    };
    Ok(event.agent.parse(&request)?.event)
}
