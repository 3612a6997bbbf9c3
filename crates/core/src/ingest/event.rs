//! An event as the pipeline sees it, whatever adapter it came through.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::store::sessions::SessionKey;

/// What kind of lifecycle event this is; decides its effect on the session
/// and on generation jobs (see `plan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    SessionStart,
    UserPrompt,
    PreTool,
    PostTool,
    ToolFailure,
    Stop,
    SubagentStop,
    PreCompact,
    SessionEnd,
    SubagentStart,
    Notification,
    /// A client-defined event type (`POST /v1/events`).
    Other,
}

impl EventKind {
    /// Claude Code's `hook_event_name`.
    pub fn from_claude_code(name: &str) -> Option<Self> {
        Some(match name {
            "SessionStart" => Self::SessionStart,
            "UserPromptSubmit" => Self::UserPrompt,
            "PreToolUse" => Self::PreTool,
            "PostToolUse" => Self::PostTool,
            "PostToolUseFailure" => Self::ToolFailure,
            "Stop" => Self::Stop,
            "SubagentStop" => Self::SubagentStop,
            "PreCompact" => Self::PreCompact,
            "SessionEnd" => Self::SessionEnd,
            "SubagentStart" => Self::SubagentStart,
            "Notification" => Self::Notification,
            _ => return None,
        })
    }

    /// Claude Code's `hook_event_name` for this kind, the one vocabulary of
    /// stored hook events whatever agent sent them.
    pub fn claude_code_name(self) -> Option<&'static str> {
        Some(match self {
            Self::SessionStart => "SessionStart",
            Self::UserPrompt => "UserPromptSubmit",
            Self::PreTool => "PreToolUse",
            Self::PostTool => "PostToolUse",
            Self::ToolFailure => "PostToolUseFailure",
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::SessionEnd => "SessionEnd",
            Self::SubagentStart => "SubagentStart",
            Self::Notification | Self::Other => return None,
        })
    }

    /// claude-mem's `eventType` values, and Claude Code's names used there.
    pub fn from_event_type(name: &str) -> Self {
        match name {
            "tool_use" | "tool_result" | "post_tool_use" => Self::PostTool,
            "tool_failure" => Self::ToolFailure,
            "user_prompt" | "prompt" => Self::UserPrompt,
            "assistant_message" | "stop" => Self::Stop,
            "session_start" => Self::SessionStart,
            "session_end" => Self::SessionEnd,
            other => Self::from_claude_code(other).unwrap_or(Self::Other),
        }
    }

    /// Events that belong to a turn; in a private turn they are dropped.
    pub fn is_turn_scoped(self) -> bool {
        !matches!(self, Self::SessionStart | Self::SessionEnd | Self::SubagentStart)
    }
}

/// Which session an event belongs to.
// Built once per event and moved, never stored in bulk: boxing the key
// would only add an allocation to every event.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum SessionTarget {
    /// The agent's own session id (hooks, `sessions/start`).
    Agent(SessionKey),
    /// Cairn's session id (`serverSessionId`).
    Server(Uuid),
    /// claude-mem's `contentSessionId`; the session is created when unknown.
    Content {
        content_session_id: String,
        agent: String,
    },
    None,
}

#[derive(Clone, Debug)]
pub struct IncomingEvent {
    /// Which adapter accepted it: `claude-code`, `api`, …
    pub source_adapter: String,
    /// hook, worker, provider, server or api.
    pub source_type: String,
    pub event_type: String,
    pub kind: EventKind,
    pub session: SessionTarget,
    pub platform_source: Option<String>,
    pub source_event_id: Option<String>,
    pub idempotency_key: String,
    /// The key is a hash of the body: made unique per turn at write time,
    /// so identical bodies in different turns (a bare `Stop`) stay distinct.
    pub key_per_turn: bool,
    pub tool_name: Option<String>,
    /// The user prompt, for UserPrompt events (decides a private turn).
    pub prompt: Option<String>,
    pub payload: serde_json::Value,
    pub metadata: serde_json::Value,
    pub occurred_at: DateTime<Utc>,
    /// `generate=false` stores the event without a generation job.
    pub generate: bool,
    /// Make the event's job due at once (`wait=true`), not at turn end.
    pub seal_now: bool,
    /// Who sent it.
    pub actor: Actor,
}

/// Who sends an event: the token, and the member it belongs to. Sessions,
/// events and the memories drawn from them carry the member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Actor {
    pub token_id: Option<Uuid>,
    pub member_id: Option<Uuid>,
}

/// A stable key for events that carry no id of their own: the hash of the body.
pub fn idempotency_key_from_body(prefix: &str, body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    format!("{prefix}:{}", hex::encode(&digest[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_claude_code_event_is_known() {
        for name in [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "Stop",
            "SubagentStop",
            "PreCompact",
            "SessionEnd",
            "SubagentStart",
        ] {
            assert!(EventKind::from_claude_code(name).is_some(), "{name}");
        }
        assert_eq!(EventKind::from_claude_code("Bogus"), None);
        for kind in [
            EventKind::SessionStart,
            EventKind::UserPrompt,
            EventKind::ToolFailure,
            EventKind::Stop,
        ] {
            assert_eq!(
                EventKind::from_claude_code(kind.claude_code_name().unwrap()),
                Some(kind)
            );
        }
        assert_eq!(EventKind::from_event_type("tool_use"), EventKind::PostTool);
        assert_eq!(EventKind::from_event_type("assistant_message"), EventKind::Stop);
        assert_eq!(EventKind::from_event_type("custom"), EventKind::Other);
    }

    #[test]
    fn body_keys_are_stable_and_distinct() {
        assert_eq!(
            idempotency_key_from_body("x", b"a"),
            idempotency_key_from_body("x", b"a")
        );
        assert_ne!(
            idempotency_key_from_body("x", b"a"),
            idempotency_key_from_body("x", b"b")
        );
    }
}
