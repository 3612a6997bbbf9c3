//! Agents' native hooks → the one event model. One adapter file per agent
//! turns the agent's hook JSON into a [`ParsedHook`]: an `IncomingEvent` whose
//! `event_type` and payload speak Claude Code's vocabulary (`UserPromptSubmit`,
//! `PostToolUse`, `tool_name` `Bash`/`Read`/`Edit`/`Write`, `tool_input`,
//! `tool_response`, `last_assistant_message`, …), which the generator reads,
//! with the agent's own event name kept as `agent_event`. Each adapter also
//! answers in its agent's own output format.

pub mod claude_code;
pub mod codex;
pub mod cursor;
mod fields;
pub mod gemini;
mod normalized;
pub mod windsurf;

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use normalized::{Normalized, Tool};

use super::IncomingEvent;
use crate::error::Error;

/// The agents with an adapter on `/v1/hooks/{agent}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookAgent {
    ClaudeCode,
    Cursor,
    Codex,
    Gemini,
    Windsurf,
}

impl HookAgent {
    pub const ALL: [HookAgent; 5] = [
        HookAgent::ClaudeCode,
        HookAgent::Cursor,
        HookAgent::Codex,
        HookAgent::Gemini,
        HookAgent::Windsurf,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => claude_code::AGENT,
            HookAgent::Cursor => cursor::AGENT,
            HookAgent::Codex => codex::AGENT,
            HookAgent::Gemini => gemini::AGENT,
            HookAgent::Windsurf => windsurf::AGENT,
        }
    }

    pub fn from_slug(slug: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.slug() == slug)
    }

    pub fn parse(self, request: &HookRequest<'_>) -> Result<ParsedHook, Error> {
        let input = fields::object(request.body)?;
        match self {
            HookAgent::ClaudeCode => claude_code::parse(input, request),
            HookAgent::Cursor => cursor::normalize(input).map(|n| n.into_parsed(self.slug(), request)),
            HookAgent::Codex => codex::normalize(input).map(|n| n.into_parsed(self.slug(), request)),
            HookAgent::Gemini => gemini::normalize(input).map(|n| n.into_parsed(self.slug(), request)),
            HookAgent::Windsurf => windsurf::normalize(input).map(|n| n.into_parsed(self.slug(), request)),
        }
    }

    /// The agent's answer; `context` is the memory to give it, when the event
    /// is one that takes context.
    pub fn answer(self, agent_event: &str, context: Option<String>) -> Answer {
        match self {
            HookAgent::ClaudeCode => claude_code::answer(agent_event, context),
            HookAgent::Cursor => cursor::answer(agent_event, context),
            HookAgent::Codex => codex::answer(agent_event, context),
            HookAgent::Gemini => gemini::answer(agent_event, context),
            HookAgent::Windsurf => windsurf::answer(agent_event, context),
        }
    }

    /// The most context this agent can take, in tokens (about 4 characters
    /// each): Claude Code cuts `additionalContext` at 10,000 characters, and
    /// Windsurf reads at most 6,000 characters of a rules file.
    pub fn context_cap_tokens(self) -> usize {
        match self {
            HookAgent::Windsurf => 1_400,
            _ => 2_400,
        }
    }

    /// Which memory the route builds for an event of this moment, if any.
    pub fn takes_context(self, moment: Moment) -> Option<Moment> {
        match (self, moment) {
            // Windsurf has no session start: its rules file is refreshed at each prompt.
            (HookAgent::Windsurf, Moment::UserPrompt) => Some(Moment::SessionStart),
            (HookAgent::Windsurf, _) | (_, Moment::Other) => None,
            // Only Claude Code takes context before a tool (COMPAT.md §1);
            // Gemini CLI takes it after one (AfterTool), so a file's
            // memories reach it once the file is read, before any edit.
            (HookAgent::ClaudeCode, Moment::PreTool) => Some(Moment::PreTool),
            (HookAgent::Gemini, Moment::FileRead) => Some(Moment::PreTool),
            (_, Moment::PreTool | Moment::FileRead) => None,
            (_, moment) => Some(moment),
        }
    }
}

/// One hook request as the route received it.
pub struct HookRequest<'a> {
    pub body: &'a [u8],
    /// The `Idempotency-Key` header (the hook client sends one per event).
    pub idempotency_key: Option<&'a str>,
    /// When the event happened: the client's `X-Cairn-Occurred-At`, else now.
    pub occurred_at: DateTime<Utc>,
}

/// What the route does with an event besides storing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// A session (re)starts: the agent gets the project's memory.
    SessionStart,
    /// A prompt: related memories, when the project opts in.
    UserPrompt,
    /// Before a tool: memories about the file it reads or changes.
    PreTool,
    /// After a file was read (an agent whose pre-tool hook cannot add
    /// context, but whose post-tool hook can: Gemini CLI).
    FileRead,
    Other,
}

#[derive(Debug)]
pub struct ParsedHook {
    pub event: IncomingEvent,
    /// The agent's own event name, as it sent it.
    pub agent_event: String,
    pub moment: Moment,
    /// SessionStart's `source` (startup, resume, clear, compact), when given.
    pub source: Option<String>,
}

/// The answer's JSON body.
pub type Answer = Value;
