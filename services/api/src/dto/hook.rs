//! The hook route's input and output as OpenAPI schemas: each agent's own hook
//! JSON (shared/COMPAT.md), one permissive object per direction with the known
//! fields documented. The adapters read the body themselves (`ingest::agents`);
//! these types only describe it, and unknown fields are accepted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// One hook event as the agent sends it. Claude Code, Codex and Gemini CLI
/// share Claude Code's field names; Cursor sends `conversation_id`,
/// `workspace_roots` and camelCase event names; Windsurf sends
/// `agent_action_name` and `tool_info`. Every field is optional here: which
/// ones an event has depends on the agent and the event, and any other field
/// is accepted and kept in the stored payload.
#[derive(Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"session_id": "3f1c", "hook_event_name": "SessionStart",
    "cwd": "/home/dev/app", "source": "startup"}))]
pub struct HookInput {
    /// The agent's session id (Claude Code, Codex, Gemini CLI): the session key.
    pub session_id: Option<String>,
    /// The event: `SessionStart`, `UserPromptSubmit`, `PreToolUse`,
    /// `PostToolUse`, `Stop`, `SessionEnd`, … (Cursor: `sessionStart`, …).
    pub hook_event_name: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub permission_mode: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    pub model: Option<String>,
    /// UserPromptSubmit: the user's prompt.
    pub prompt: Option<String>,
    pub tool_name: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub tool_input: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub tool_response: Option<Value>,
    /// The natural idempotency key of a tool event.
    pub tool_use_id: Option<String>,
    pub last_assistant_message: Option<String>,
    /// SessionEnd: `clear`, `logout`, `prompt_input_exit`, `other`, …
    pub reason: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// Codex: the turn.
    pub turn_id: Option<String>,
    /// Cursor: the conversation, its session key.
    pub conversation_id: Option<String>,
    pub generation_id: Option<String>,
    /// Cursor: the workspace roots; the first is the working directory.
    pub workspace_roots: Option<Vec<String>>,
    pub user_email: Option<String>,
    /// Windsurf: `pre_user_prompt`, `post_write_code`, …
    pub agent_action_name: Option<String>,
    /// Windsurf: the trajectory, its session key.
    pub trajectory_id: Option<String>,
    pub execution_id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub tool_info: Option<Value>,
    /// Any other field the agent sends.
    #[serde(flatten)]
    #[schema(additional_properties)]
    pub other: BTreeMap<String, Value>,
}

/// The answer, in the agent's own hook output format: `{}` for most events.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct HookOutput {
    /// Claude Code, Codex and Gemini CLI: the project's memory at session
    /// start (and related memories on a prompt, when enabled).
    #[serde(rename = "hookSpecificOutput")]
    pub hook_specific_output: Option<HookSpecificOutput>,
    /// Cursor's sessionStart: the project's memory.
    pub additional_context: Option<String>,
    /// Windsurf, which takes no context from hooks: the memory `cairn hook`
    /// writes into `.windsurf/rules/cairn-memory.md`.
    #[serde(rename = "memoryMarkdown")]
    pub memory_markdown: Option<String>,
    /// Any other field of the agent's output format.
    #[serde(flatten)]
    #[schema(additional_properties)]
    pub other: BTreeMap<String, Value>,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    /// The event answered, e.g. `SessionStart`.
    pub hook_event_name: String,
    /// Markdown handed to the model.
    pub additional_context: Option<String>,
}
