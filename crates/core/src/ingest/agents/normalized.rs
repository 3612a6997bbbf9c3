//! The one event model every non-Claude-Code adapter fills in, and how it
//! becomes an `IncomingEvent`: `event_type` is Claude Code's name for the
//! kind, the payload uses Claude Code's field names, and the agent's own
//! event name and remaining fields ride along.

use serde_json::{Map, Value, json};

use super::{HookRequest, Moment, ParsedHook};
use crate::{
    ingest::{EventKind, IncomingEvent, SessionTarget, idempotency_key_from_body},
    store::sessions::SessionKey,
};

/// A tool, named as Claude Code names it, so the generator digests every
/// agent's tool calls alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tool {
    Read,
    Edit,
    Write,
    Shell,
    Grep,
    Glob,
    /// An MCP tool: server and tool name.
    Mcp(String, String),
    /// Anything else, under the agent's own name.
    Other(String),
}

impl Tool {
    pub fn claude_code_name(&self) -> String {
        match self {
            Tool::Read => "Read".into(),
            Tool::Edit => "Edit".into(),
            Tool::Write => "Write".into(),
            Tool::Shell => "Bash".into(),
            Tool::Grep => "Grep".into(),
            Tool::Glob => "Glob".into(),
            Tool::Mcp(server, tool) => format!("mcp__{server}__{tool}"),
            Tool::Other(name) => name.clone(),
        }
    }
}

/// An agent's hook event in Cairn's terms.
#[derive(Clone, Debug)]
pub struct Normalized {
    /// The agent's own event name (`afterShellExecution`, `BeforeTool`, …).
    pub agent_event: String,
    pub kind: EventKind,
    pub session_id: String,
    pub cwd: Option<String>,
    pub prompt: Option<String>,
    pub tool: Option<Tool>,
    /// In Claude Code's shape: `{"file_path"}`, `{"command"}`,
    /// `{"file_path", "old_string", "new_string"}`, …
    pub tool_input: Option<Value>,
    pub tool_response: Option<Value>,
    /// A failed tool's error text (with its kind `ToolFailure`).
    pub error: Option<Value>,
    pub last_assistant_message: Option<String>,
    /// The agent's id of this tool call, when it has one: the idempotency key.
    pub tool_use_id: Option<String>,
    /// SessionStart's source (startup, resume, clear, compact).
    pub source: Option<String>,
    pub model: Option<String>,
    /// The agent's other fields, kept as they came (ids, transcript path, …).
    pub extra: Map<String, Value>,
}

impl Normalized {
    pub fn new(agent_event: &str, kind: EventKind, session_id: &str) -> Self {
        Self {
            agent_event: agent_event.to_string(),
            kind,
            session_id: session_id.to_string(),
            cwd: None,
            prompt: None,
            tool: None,
            tool_input: None,
            tool_response: None,
            error: None,
            last_assistant_message: None,
            tool_use_id: None,
            source: None,
            model: None,
            extra: Map::new(),
        }
    }

    pub fn into_parsed(self, agent: &'static str, request: &HookRequest<'_>) -> ParsedHook {
        let hook_event_name = self
            .kind
            .claude_code_name()
            .map_or_else(|| self.agent_event.clone(), str::to_string);
        let mut payload = self.extra;
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                payload.insert(key.to_string(), v);
            }
        };
        put("session_id", Some(json!(self.session_id)));
        put("hook_event_name", Some(json!(hook_event_name)));
        put("agent_event", Some(json!(self.agent_event)));
        put("cwd", self.cwd.clone().map(Value::from));
        put("prompt", self.prompt.clone().map(Value::from));
        put(
            "tool_name",
            self.tool.as_ref().map(|t| json!(t.claude_code_name())),
        );
        put("tool_input", self.tool_input);
        put("tool_response", self.tool_response);
        put("error", self.error);
        put(
            "last_assistant_message",
            self.last_assistant_message.map(Value::from),
        );
        put("tool_use_id", self.tool_use_id.clone().map(Value::from));
        put("source", self.source.clone().map(Value::from));
        put("model", self.model.map(Value::from));
        let identity = Identity {
            agent,
            session_id: &self.session_id,
            event_name: &hook_event_name,
            tool_use_id: self.tool_use_id.as_deref(),
            prompt: self.prompt.as_deref(),
        };
        let event = identity.incoming(
            request,
            self.kind,
            self.cwd,
            self.tool.map(|t| t.claude_code_name()),
            self.prompt.clone(),
            Value::Object(payload),
        );
        let moment = match moment(self.kind) {
            Moment::Other
                if self.kind == EventKind::PostTool && event.tool_name.as_deref() == Some("Read") =>
            {
                Moment::FileRead
            }
            other => other,
        };
        ParsedHook {
            event,
            moment,
            agent_event: self.agent_event,
            source: self.source,
        }
    }
}

pub fn moment(kind: EventKind) -> Moment {
    match kind {
        EventKind::SessionStart => Moment::SessionStart,
        EventKind::UserPrompt => Moment::UserPrompt,
        EventKind::PreTool => Moment::PreTool,
        _ => Moment::Other,
    }
}

/// What makes an event itself: its session, name and ids. Shared by every
/// adapter (Claude Code's included) so keys are made one way.
pub struct Identity<'a> {
    pub agent: &'static str,
    pub session_id: &'a str,
    pub event_name: &'a str,
    pub tool_use_id: Option<&'a str>,
    pub prompt: Option<&'a str>,
}

impl Identity<'_> {
    /// The idempotency key: the agent's tool-call id, else the client's
    /// `Idempotency-Key`, else the prompt's hash for prompts (so a retried
    /// prompt opens no second turn), or the body's hash. An id-less key is
    /// made unique per turn at write time, except a stop that carries a
    /// substantial final message: that body is the turn's own, so a copy that
    /// arrives late, after the next prompt, is still the same event. (A short
    /// one, "Done.", may well repeat in a later turn, so it stays per turn.)
    pub fn incoming(
        &self,
        request: &HookRequest<'_>,
        kind: EventKind,
        cwd: Option<String>,
        tool_name: Option<String>,
        prompt: Option<String>,
        payload: Value,
    ) -> IncomingEvent {
        let prompt_hash = self
            .prompt
            .filter(|_| kind == EventKind::UserPrompt)
            .map(|p| idempotency_key_from_body("prompt", p.as_bytes()));
        let idempotency_key = match (self.tool_use_id, request.idempotency_key, &prompt_hash) {
            (Some(id), _, _) => format!(
                "{}:{}:{}:{id}",
                short(self.agent),
                self.session_id,
                self.event_name
            ),
            (None, Some(h), _) => format!("hdr:{h}"),
            // Scoped to the session: another session may open with the same words.
            (None, None, Some(hash)) => format!("{}:{}:{hash}", short(self.agent), self.session_id),
            (None, None, None) => {
                idempotency_key_from_body(&format!("{}-body", short(self.agent)), request.body)
            }
        };
        let key = SessionKey {
            agent: self.agent.into(),
            external_session_id: self.session_id.to_string(),
            content_session_id: Some(self.session_id.to_string()),
            platform_source: Some(self.agent.into()),
            cwd,
            prompt_hash,
            ..Default::default()
        };
        IncomingEvent {
            source_adapter: self.agent.into(),
            source_type: "hook".into(),
            event_type: self.event_name.to_string(),
            kind,
            session: SessionTarget::Agent(key),
            platform_source: Some(self.agent.into()),
            source_event_id: self.tool_use_id.map(str::to_string),
            key_per_turn: self.tool_use_id.is_none()
                && request.idempotency_key.is_none()
                && !stop_with_final_message(kind, &payload),
            idempotency_key,
            tool_name,
            prompt,
            payload,
            metadata: json!({}),
            occurred_at: request.occurred_at,
            generate: true,
            seal_now: false,
            actor: Default::default(),
        }
    }
}

/// Final messages at least this long are taken as unique within a session.
const DISTINCT_FINAL_MESSAGE_CHARS: usize = 64;

fn stop_with_final_message(kind: EventKind, payload: &Value) -> bool {
    matches!(kind, EventKind::Stop | EventKind::SubagentStop)
        && payload
            .get("last_assistant_message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.trim().chars().count() >= DISTINCT_FINAL_MESSAGE_CHARS)
}

/// Claude Code's keys keep their historic `cc` prefix.
fn short(agent: &str) -> &str {
    if agent == "claude-code" { "cc" } else { agent }
}
