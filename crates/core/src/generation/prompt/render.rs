//! One event as compact text: a full block for observation prompts
//! (`### 3. PostToolUse Bash` then its sections) or one brief line for
//! summary prompts. Every field is elided to the per-event budget.

use serde_json::{Map, Value};

use super::elide::{elide, first_line};
use super::payload::{self, ToolKind};
use crate::generation::material::EventRecord;

/// Sections of a block and the payload keys each shows; the first key present wins.
const SECTIONS: [(&str, &[&str]); 5] = [
    ("prompt", &["prompt"]),
    ("input", &["tool_input"]),
    ("output", &["tool_response", "output", "result_json"]),
    ("error", &["error"]),
    ("message", &["last_assistant_message"]),
];

/// Payload keys that say nothing about the work (or are shown elsewhere).
const NOISE: [&str; 9] = [
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "permission_mode",
    "tool_use_id",
    "tool_name",
    "stop_hook_active",
    "prompt_number",
];

/// Longest command or path shown in a brief line, in characters.
const BRIEF_CHARS: usize = 160;

/// Renders event number `number` as a block: a `### N. Type Tool` header,
/// then `prompt:`, `input:`, `output:`, `error:`, `message:` and `details:`
/// sections as present, each leaf field elided to `per_field` characters.
pub(crate) fn render_event(number: usize, event: &EventRecord, per_field: usize) -> String {
    let mut out = format!("### {number}. {}", event.event_type);
    if let Some(tool) = payload::tool_name(event) {
        out.push(' ');
        out.push_str(tool);
    }
    let Some(fields) = event.payload.as_object() else {
        push_section(&mut out, "details", &event.payload, per_field);
        return out;
    };
    let mut shown: Vec<&str> = NOISE.to_vec();
    for (label, keys) in SECTIONS {
        let Some(value) = keys
            .iter()
            .find_map(|k| fields.get(*k).filter(|v| is_present(Some(v))))
        else {
            continue;
        };
        shown.extend_from_slice(keys);
        if label == "output"
            && payload::tool_kind(event) == ToolKind::Modify
            && fields.contains_key("tool_input")
        {
            continue; // An edit's response repeats its input (and often the whole file).
        }
        push_section(&mut out, label, value, per_field);
    }
    let rest: Map<String, Value> = fields
        .iter()
        .filter(|(k, v)| !shown.contains(&k.as_str()) && is_present(Some(v)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !rest.is_empty() {
        push_section(&mut out, "details", &Value::Object(rest), per_field);
    }
    out
}

/// One line for a tool outcome: `- Bash: cargo test [failed]`,
/// `- Edit: src/lib.rs`, `- Grep: "fn main" in src`.
pub(crate) fn render_brief(event: &EventRecord) -> String {
    let tool = payload::tool_name(event).unwrap_or("command");
    let target = match (
        payload::command(event),
        payload::pattern(event),
        payload::file_path(event),
    ) {
        (Some(command), _, _) => first_line(command, BRIEF_CHARS),
        (None, Some(pattern), path) => {
            let pattern = first_line(pattern, BRIEF_CHARS).unwrap_or_default();
            Some(path.map_or(format!("\"{pattern}\""), |p| format!("\"{pattern}\" in {p}")))
        }
        (None, None, path) => path.and_then(|p| first_line(p, BRIEF_CHARS)),
    };
    let mut line = format!("- {tool}");
    if let Some(target) = target {
        line.push_str(": ");
        line.push_str(&target);
    }
    if payload::failed(event) {
        line.push_str(" [failed]");
    }
    line
}

/// Appends `label:` and the value: a string on its own lines, an object as
/// `  key: value` lines (nested objects flattened one level as `a.b`).
fn push_section(out: &mut String, label: &str, value: &Value, per_field: usize) {
    out.push('\n');
    out.push_str(label);
    out.push(':');
    match value {
        Value::Object(map) => push_fields(out, "", map, per_field, 1),
        other => push_text(out, &payload::value_text(other), per_field),
    }
}

fn push_fields(out: &mut String, prefix: &str, map: &Map<String, Value>, per_field: usize, depth: u8) {
    for (key, value) in map.iter().filter(|(_, v)| is_present(Some(v))) {
        let name = format!("{prefix}{key}");
        match value {
            Value::Object(inner) if depth > 0 => {
                push_fields(out, &format!("{name}."), inner, per_field, depth - 1)
            }
            _ => {
                out.push_str("\n  ");
                out.push_str(&name);
                out.push(':');
                push_text(out, &payload::value_text(value), per_field);
            }
        }
    }
}

/// Appends text after a label: inline when it is one line, else on the next lines.
fn push_text(out: &mut String, text: &str, per_field: usize) {
    let text = elide(text.trim_end(), per_field);
    out.push(if text.contains('\n') { '\n' } else { ' ' });
    out.push_str(&text);
}

/// Whether a value is worth showing: not missing, null or an empty string/object.
fn is_present(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::generation::prompt::fixtures::event;

    #[test]
    fn bash_block_has_header_input_and_output() {
        let e = event(
            "PostToolUse",
            Some("Bash"),
            json!({"session_id": "s", "tool_input": {"command": "cargo test", "description": "Run tests"},
                   "tool_response": {"stdout": "running 3 tests\ntest result: ok", "stderr": "", "interrupted": false}}),
        );
        let block = render_event(3, &e, 1_000);
        assert!(
            block.starts_with("### 3. PostToolUse Bash\ninput:\n  command: cargo test\n"),
            "{block}"
        );
        assert!(block.contains("\noutput:\n  "), "{block}");
        assert!(
            block.contains("\n  stdout:\nrunning 3 tests\ntest result: ok"),
            "{block}"
        );
        assert!(block.contains("\n  interrupted: false"), "{block}");
        assert!(
            !block.contains("session_id") && !block.contains("stderr"),
            "{block}"
        );
    }

    #[test]
    fn failure_block_shows_error_and_details() {
        let e = event(
            "PostToolUseFailure",
            Some("Bash"),
            json!({"tool_input": {"command": "make"}, "error": "Exit code 2", "is_interrupt": false}),
        );
        let block = render_event(1, &e, 1_000);
        assert!(
            block.contains("\nerror: Exit code 2\ndetails:\n  is_interrupt: false"),
            "{block}"
        );
    }

    #[test]
    fn edit_output_is_left_out_and_fields_are_elided() {
        let big = "y".repeat(50_000);
        let e = event(
            "PostToolUse",
            Some("Edit"),
            json!({"tool_input": {"file_path": "a.rs", "old_string": big, "new_string": "z"},
                   "tool_response": {"originalFile": big}}),
        );
        let block = render_event(1, &e, 300);
        assert!(
            !block.contains("output:") && block.contains("chars elided"),
            "{block}"
        );
        assert!(block.chars().count() < 500, "{}", block.chars().count());
    }

    #[test]
    fn odd_payloads_render_without_panicking() {
        for payload in [
            json!(null),
            json!("text"),
            json!([1, {"a": 2}]),
            json!({"tool_input": 7, "error": {}}),
        ] {
            let block = render_event(1, &event("Weird", None, payload), 50);
            assert!(block.starts_with("### 1. Weird"), "{block}");
        }
    }

    #[test]
    fn brief_lines_name_tool_target_and_failure() {
        let bash = event(
            "PostToolUseFailure",
            Some("Bash"),
            json!({"tool_input": {"command": "cargo test\n--x"}}),
        );
        assert_eq!(render_brief(&bash), "- Bash: cargo test [failed]");
        let grep = event(
            "PostToolUse",
            Some("Grep"),
            json!({"tool_input": {"pattern": "fn", "path": "src"}}),
        );
        assert_eq!(render_brief(&grep), "- Grep: \"fn\" in src");
        let edit = event(
            "PostToolUse",
            Some("Edit"),
            json!({"tool_input": {"file_path": "a.rs"}}),
        );
        assert_eq!(render_brief(&edit), "- Edit: a.rs");
    }
}
