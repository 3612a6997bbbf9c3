//! Test materials shaped like Claude Code hook JSON, shared by the prompt
//! builder's and the heuristic provider's tests.

use cairn_shared::jobs::JobType;
use chrono::{TimeZone, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::generation::material::{EventRecord, Material};

/// An event of turn 1, as the ingest path stores it.
pub(crate) fn event(event_type: &str, tool: Option<&str>, payload: Value) -> EventRecord {
    EventRecord {
        event_type: event_type.to_string(),
        tool_name: tool.map(str::to_string),
        prompt_number: Some(1),
        payload,
        occurred_at: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    }
}

/// A job of `job_type` in project `cairn` over `events`.
pub(crate) fn material(job_type: JobType, events: Vec<EventRecord>) -> Material {
    Material {
        job_id: Uuid::nil(),
        job_type,
        project: "cairn".into(),
        agent: Some("claude-code".into()),
        cwd: Some("/work/cairn".into()),
        prompt_number: events.first().and_then(|e| e.prompt_number),
        events,
    }
}

pub(crate) fn user_prompt(text: &str) -> EventRecord {
    event(
        "UserPromptSubmit",
        None,
        json!({"prompt": text, "session_id": "s1"}),
    )
}

pub(crate) fn read(path: &str) -> EventRecord {
    event(
        "PostToolUse",
        Some("Read"),
        json!({"tool_input": {"file_path": path}, "tool_response": {"type": "text", "file": {"filePath": path, "content": "fn main() {}"}}}),
    )
}

pub(crate) fn edit(path: &str) -> EventRecord {
    event(
        "PostToolUse",
        Some("Edit"),
        json!({"tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}, "tool_response": {"originalFile": "a"}}),
    )
}

/// A Bash call; `failed` makes it a `PostToolUseFailure` with Claude Code's error text.
pub(crate) fn bash(command: &str, failed: bool) -> EventRecord {
    let input = json!({"command": command, "description": "run"});
    if failed {
        event(
            "PostToolUseFailure",
            Some("Bash"),
            json!({"tool_input": input, "error": "Exit code 101\nthread 'parse' panicked at src/parse.rs:9", "is_interrupt": false}),
        )
    } else {
        event(
            "PostToolUse",
            Some("Bash"),
            json!({"tool_input": input, "tool_response": {"stdout": "test result: ok. 4 passed; 0 failed", "stderr": "", "interrupted": false}}),
        )
    }
}

pub(crate) fn stop(message: &str) -> EventRecord {
    event(
        "Stop",
        None,
        json!({"last_assistant_message": message, "stop_hook_active": false}),
    )
}

/// A turn that reads, edits, fails `cargo test`, then passes it, then stops.
pub(crate) fn bugfix_turn(prompt: &str) -> Vec<EventRecord> {
    vec![
        user_prompt(prompt),
        read("src/parse.rs"),
        bash("cargo test", true),
        edit("src/parse.rs"),
        bash("cargo test", false),
        stop("Fixed the parser.\nNext: add a fuzz test for headers.\nAll green."),
    ]
}

/// Sets the turn number of every event.
pub(crate) fn in_turn(mut events: Vec<EventRecord>, number: i32) -> Vec<EventRecord> {
    for e in &mut events {
        e.prompt_number = Some(number);
    }
    events
}
