//! Gemini CLI's hooks (`.gemini/settings.json`) → the event model, and its
//! answers. BeforeAgent is the prompt, AfterAgent the turn's end with the
//! model's answer (`prompt_response`); its tools are renamed to Claude Code's.

use serde_json::{Map, Value, json};

use super::{
    Answer, Normalized, Tool, claude_code,
    fields::{optional_str, required_str, session_id},
};
use crate::{error::Error, ingest::EventKind};

pub const AGENT: &str = "gemini";

pub fn normalize(mut input: Map<String, Value>) -> Result<Normalized, Error> {
    let event = required_str(&input, "hook_event_name")?.to_string();
    let session = session_id(&input, "session_id")?.to_string();
    let mut n = Normalized::new(&event, kind(&event, &input), &session);
    n.cwd = optional_str(&input, "cwd")?.map(str::to_string);
    n.source = optional_str(&input, "source")?.map(str::to_string);
    match event.as_str() {
        "BeforeAgent" => n.prompt = Some(without_hook_context(required_str(&input, "prompt")?)),
        "AfterAgent" => {
            n.last_assistant_message = optional_str(&input, "prompt_response")?.map(str::to_string)
        }
        "BeforeTool" | "AfterTool" => {
            let tool = required_str(&input, "tool_name")?.to_string();
            let (tool, tool_input) = tool_named(&tool, input.remove("tool_input"));
            n.tool = Some(tool);
            n.tool_input = tool_input;
            n.tool_response = input.remove("tool_response");
            if n.kind == EventKind::ToolFailure {
                n.error = n.tool_response.as_ref().and_then(|r| r.get("error")).cloned();
            }
        }
        _ => {}
    }
    for used in [
        "hook_event_name",
        "session_id",
        "cwd",
        "source",
        "prompt",
        "prompt_response",
        "tool_name",
    ] {
        input.remove(used);
    }
    n.extra = input;
    Ok(n)
}

/// Gemini CLI puts the context hooks gave at session start in front of the
/// prompt it reports, as `<hook_context>…</hook_context>` (Cairn's own memory
/// among it, HTML-escaped): injected text, not the user's words, so it is not
/// stored as the prompt and memory never echoes itself.
fn without_hook_context(prompt: &str) -> String {
    const OPEN: &str = "<hook_context>";
    const CLOSE: &str = "</hook_context>";
    let mut rest = prompt;
    let mut out = String::with_capacity(prompt.len());
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find(CLOSE) {
            Some(end) => &rest[start + end + CLOSE.len()..],
            // Unclosed: everything after it is injected too.
            None => "",
        };
    }
    out.push_str(rest);
    out.trim().to_string()
}

fn kind(event: &str, input: &Map<String, Value>) -> EventKind {
    match event {
        "SessionStart" => EventKind::SessionStart,
        "BeforeAgent" => EventKind::UserPrompt,
        "BeforeTool" => EventKind::PreTool,
        "AfterTool" if failed(input) => EventKind::ToolFailure,
        "AfterTool" => EventKind::PostTool,
        "AfterAgent" => EventKind::Stop,
        "PreCompress" => EventKind::PreCompact,
        "SessionEnd" => EventKind::SessionEnd,
        _ => EventKind::Notification,
    }
}

/// A tool whose response carries a non-empty `error`.
fn failed(input: &Map<String, Value>) -> bool {
    input
        .get("tool_response")
        .and_then(|r| r.get("error"))
        .is_some_and(|e| !e.is_null() && e != "")
}

/// Gemini CLI's built-in tools under Claude Code's names and input fields.
fn tool_named(name: &str, input: Option<Value>) -> (Tool, Option<Value>) {
    let renamed = |mut i: Value, from: &str, to: &str| {
        if let Some(v) = i.as_object_mut().and_then(|o| o.remove(from)) {
            i[to] = v;
        }
        i
    };
    match name {
        "read_file" | "read_many_files" => (
            Tool::Read,
            input.map(|i| renamed(i, "absolute_path", "file_path")),
        ),
        "write_file" => (Tool::Write, input),
        "replace" | "edit" => (Tool::Edit, input),
        "run_shell_command" => (Tool::Shell, input),
        "search_file_content" | "grep" => (Tool::Grep, input),
        "glob" | "list_directory" => (Tool::Glob, input),
        other => (Tool::Other(other.to_string()), input),
    }
}

/// `hookSpecificOutput.additionalContext` where Gemini CLI takes it
/// (SessionStart, BeforeAgent, and AfterTool: appended to the tool's result).
pub fn answer(event: &str, context: Option<String>) -> Answer {
    match context {
        Some(_) => {
            claude_code::hook_specific_output(event, &["SessionStart", "BeforeAgent", "AfterTool"], context)
        }
        None => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_context_in_front_of_the_prompt_is_not_the_prompt() {
        let reported = "<hook_context>&lt;cairn-context&gt;\n# Project memory\n&lt;/cairn-context&gt;</hook_context>\n\nfix the login test";
        assert_eq!(without_hook_context(reported), "fix the login test");
        assert_eq!(without_hook_context("plain prompt"), "plain prompt");
        assert_eq!(without_hook_context("a <hook_context>never closed"), "a");
    }
}
