//! Cursor's hooks (`.cursor/hooks.json`) → the event model, and Cursor's
//! answers. A conversation is a session (`conversation_id`); the first of
//! `workspace_roots` is the working directory. Only events that need no
//! decision are installed (Cairn never allows or denies on the user's behalf).

use serde_json::{Map, Value, json};

use super::{
    Answer, Normalized, Tool,
    fields::{first_str, optional_str, required_str, session_id},
};
use crate::{error::Error, ingest::EventKind};

pub const AGENT: &str = "cursor";

pub fn normalize(mut input: Map<String, Value>) -> Result<Normalized, Error> {
    let event = required_str(&input, "hook_event_name")?.to_string();
    let session = match first_str(&input, &["conversation_id", "session_id"])? {
        Some(_) if input.contains_key("conversation_id") => session_id(&input, "conversation_id")?,
        _ => session_id(&input, "session_id")?,
    }
    .to_string();
    let kind = kind(&event);
    let mut n = Normalized::new(&event, kind, &session);
    n.cwd = workspace_root(&input).or(optional_str(&input, "cwd")?.map(str::to_string));
    n.model = optional_str(&input, "model")?.map(str::to_string);
    n.tool_use_id = optional_str(&input, "tool_use_id")?.map(str::to_string);
    match event.as_str() {
        "beforeSubmitPrompt" => n.prompt = Some(required_str(&input, "prompt")?.to_string()),
        "afterShellExecution" => {
            n.tool = Some(Tool::Shell);
            n.tool_input = Some(json!({"command": required_str(&input, "command")?}));
            n.tool_response = input.remove("output").map(|o| json!({"stdout": o}));
        }
        "afterFileEdit" => {
            n.tool = Some(Tool::Edit);
            let path = required_str(&input, "file_path")?.to_string();
            n.tool_input = Some(edit_input(&path, input.remove("edits")));
        }
        "afterMCPExecution" => {
            let tool = required_str(&input, "tool_name")?.to_string();
            n.tool = Some(Tool::Other(tool));
            n.tool_input = input.remove("tool_input");
            n.tool_response = input.remove("result_json");
        }
        "postToolUse" | "postToolUseFailure" | "preToolUse" => {
            let tool = required_str(&input, "tool_name")?.to_string();
            n.tool = Some(tool_named(&tool));
            n.tool_input = input.remove("tool_input");
            n.tool_response = input
                .remove("tool_output")
                .or_else(|| input.remove("tool_response"));
            n.error = input.remove("error");
        }
        "afterAgentResponse" => n.last_assistant_message = optional_str(&input, "text")?.map(str::to_string),
        "sessionStart" => n.source = optional_str(&input, "source")?.map(str::to_string),
        _ => {}
    }
    for used in [
        "hook_event_name",
        "conversation_id",
        "prompt",
        "command",
        "file_path",
        "text",
    ] {
        input.remove(used);
    }
    n.extra = input;
    Ok(n)
}

fn kind(event: &str) -> EventKind {
    match event {
        "sessionStart" => EventKind::SessionStart,
        "beforeSubmitPrompt" => EventKind::UserPrompt,
        "preToolUse" => EventKind::PreTool,
        "postToolUse" | "afterShellExecution" | "afterFileEdit" | "afterMCPExecution" => EventKind::PostTool,
        "postToolUseFailure" => EventKind::ToolFailure,
        // The final text comes just before `stop`; both belong to the turn.
        "stop" => EventKind::Stop,
        "subagentStart" => EventKind::SubagentStart,
        "subagentStop" => EventKind::SubagentStop,
        "preCompact" => EventKind::PreCompact,
        "sessionEnd" => EventKind::SessionEnd,
        _ => EventKind::Notification,
    }
}

/// Cursor's agent tools under Claude Code's names.
fn tool_named(name: &str) -> Tool {
    match name {
        "Read" | "read_file" => Tool::Read,
        "Shell" | "run_terminal_cmd" => Tool::Shell,
        "Edit" | "StrReplace" | "edit_file" | "search_replace" | "MultiEdit" => Tool::Edit,
        "Write" | "write" => Tool::Write,
        "Grep" | "grep" | "grep_search" | "codebase_search" => Tool::Grep,
        "Glob" | "glob_file_search" | "file_search" | "list_dir" => Tool::Glob,
        other => Tool::Other(other.to_string()),
    }
}

fn workspace_root(input: &Map<String, Value>) -> Option<String> {
    input
        .get("workspace_roots")?
        .as_array()?
        .first()?
        .as_str()
        .map(str::to_string)
}

/// An edit as Claude Code's Edit input; several edits keep all their parts.
pub(super) fn edit_input(path: &str, edits: Option<Value>) -> Value {
    let mut input = json!({"file_path": path});
    if let Some(Value::Array(edits)) = edits {
        if let [one] = edits.as_slice() {
            input["old_string"] = one.get("old_string").cloned().unwrap_or(Value::Null);
            input["new_string"] = one.get("new_string").cloned().unwrap_or(Value::Null);
        } else {
            input["edits"] = Value::Array(edits);
        }
    }
    input
}

/// sessionStart takes `additional_context`; beforeSubmitPrompt must say
/// `continue`; everything else answers `{}`.
pub fn answer(event: &str, context: Option<String>) -> Answer {
    match (event, context) {
        ("sessionStart", Some(context)) => json!({"additional_context": context}),
        ("beforeSubmitPrompt", _) => json!({"continue": true}),
        _ => json!({}),
    }
}
