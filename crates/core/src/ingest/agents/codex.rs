//! Codex CLI's hooks (`~/.codex/hooks.json`) → the event model, and Codex's
//! answers. Codex follows Claude Code's names and fields; its shell tool and
//! `apply_patch` are renamed to Claude Code's `Bash` and `Edit`.

use serde_json::{Map, Value, json};

use super::{
    Answer, Normalized, Tool, claude_code,
    fields::{optional_str, required_str, session_id},
};
use crate::{error::Error, ingest::EventKind};

pub const AGENT: &str = "codex";

pub fn normalize(mut input: Map<String, Value>) -> Result<Normalized, Error> {
    let event = required_str(&input, "hook_event_name")?.to_string();
    let session = session_id(&input, "session_id")?.to_string();
    let kind = EventKind::from_claude_code(&event).unwrap_or(EventKind::Notification);
    let mut n = Normalized::new(&event, kind, &session);
    n.cwd = optional_str(&input, "cwd")?.map(str::to_string);
    n.model = optional_str(&input, "model")?.map(str::to_string);
    n.source = optional_str(&input, "source")?.map(str::to_string);
    n.tool_use_id = optional_str(&input, "tool_use_id")?.map(str::to_string);
    n.last_assistant_message = optional_str(&input, "last_assistant_message")?.map(str::to_string);
    if kind == EventKind::UserPrompt {
        n.prompt = Some(required_str(&input, "prompt")?.to_string());
    }
    if let Some(tool) = optional_str(&input, "tool_name")?.map(str::to_string) {
        let (tool, tool_input) = tool_named(&tool, input.remove("tool_input"));
        n.tool = Some(tool);
        n.tool_input = tool_input;
        n.tool_response = input.remove("tool_response");
    }
    for used in [
        "hook_event_name",
        "session_id",
        "cwd",
        "model",
        "source",
        "tool_use_id",
        "last_assistant_message",
        "prompt",
        "tool_name",
    ] {
        input.remove(used);
    }
    n.extra = input;
    Ok(n)
}

/// Codex's tools under Claude Code's names; a patch's first file becomes the
/// edit's `file_path`.
fn tool_named(name: &str, input: Option<Value>) -> (Tool, Option<Value>) {
    match name {
        "Bash" | "shell" | "local_shell" | "exec_command" | "container.exec" => {
            let input = input.map(|i| match i.get("command") {
                Some(Value::Array(argv)) => json!({"command": shell_words(argv)}),
                _ => i,
            });
            (Tool::Shell, input)
        }
        "apply_patch" | "Edit" => {
            let input = input.map(|mut i| {
                // The whole patch rides in `command` (older builds: `patch` or `input`).
                let patch = ["command", "patch", "input"]
                    .iter()
                    .find_map(|k| i.get(*k).and_then(Value::as_str));
                if let Some(path) = patch.and_then(patched_file) {
                    i["file_path"] = json!(path);
                }
                i
            });
            (Tool::Edit, input)
        }
        "read_file" | "Read" => (Tool::Read, input),
        other => (Tool::Other(other.to_string()), input),
    }
}

fn shell_words(argv: &[Value]) -> String {
    let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
    // `bash -lc "<script>"` is how Codex runs commands: the script is the command.
    match words.as_slice() {
        [_, flag, script] if flag.starts_with('-') && flag.ends_with('c') => script.to_string(),
        _ => words.join(" "),
    }
}

/// `*** Update File: src/x.rs` / `*** Add File: …` in an apply_patch body.
fn patched_file(patch: &str) -> Option<&str> {
    patch.lines().find_map(|l| {
        l.strip_prefix("*** Update File: ")
            .or_else(|| l.strip_prefix("*** Add File: "))
            .map(str::trim)
    })
}

/// As Claude Code: `hookSpecificOutput.additionalContext` at SessionStart
/// (and UserPromptSubmit), `{}` otherwise.
pub fn answer(event: &str, context: Option<String>) -> Answer {
    claude_code::hook_specific_output(event, &["SessionStart", "UserPromptSubmit"], context)
}
