//! Tolerant accessors over one event's hook JSON (COMPAT.md §1): the tool, its
//! file or command, its output, whether it failed. Shared by the prompt
//! renderer and the heuristic provider; any field may be missing or of
//! another JSON type, and then the accessor answers `None` or `false`.

use serde_json::Value;

use super::elide::first_line;
use crate::generation::material::EventRecord;

/// Longest error excerpt kept, in characters.
const ERROR_LINE_CHARS: usize = 300;
/// Lines an error excerpt holds at most: the failure line and what follows it.
const ERROR_EXCERPT_LINES: usize = 3;

/// What a tool does to the workspace, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ToolKind {
    /// Reads one file: Read, NotebookRead.
    Read,
    /// Searches a path: Grep, Glob, LS.
    Search,
    /// Writes files: Edit, Write, MultiEdit, NotebookEdit.
    Modify,
    /// Runs a command: Bash, or any event carrying a `command`.
    Shell,
    Other,
}

/// The tool's name: the stored column, else the payload's `tool_name`.
pub(crate) fn tool_name(event: &EventRecord) -> Option<&str> {
    event
        .tool_name
        .as_deref()
        .or_else(|| str_field(&event.payload, "tool_name"))
        .filter(|n| !n.is_empty())
}

/// The kind of the event's tool.
pub(crate) fn tool_kind(event: &EventRecord) -> ToolKind {
    match tool_name(event) {
        Some("Read" | "NotebookRead") => ToolKind::Read,
        Some("Grep" | "Glob" | "LS") => ToolKind::Search,
        Some("Edit" | "Write" | "MultiEdit" | "NotebookEdit") => ToolKind::Modify,
        Some("Bash") => ToolKind::Shell,
        _ if command(event).is_some() => ToolKind::Shell,
        _ => ToolKind::Other,
    }
}

/// Whether the event reports a tool's outcome (not a prompt, a stop, or a
/// `PreToolUse` announcement).
pub(crate) fn is_tool_outcome(event: &EventRecord) -> bool {
    event.event_type != "PreToolUse" && (tool_name(event).is_some() || command(event).is_some())
}

/// The user's prompt of a `UserPromptSubmit` (or any event carrying `prompt`).
pub(crate) fn prompt(event: &EventRecord) -> Option<&str> {
    str_field(&event.payload, "prompt").filter(|p| !p.trim().is_empty())
}

/// The agent's last message, from `Stop` (`last_assistant_message`).
pub(crate) fn last_assistant_message(event: &EventRecord) -> Option<&str> {
    str_field(&event.payload, "last_assistant_message").filter(|m| !m.trim().is_empty())
}

/// The tool's input object (`tool_input`).
pub(crate) fn tool_input(event: &EventRecord) -> Option<&Value> {
    event.payload.get("tool_input").filter(|v| !v.is_null())
}

/// The tool's output: `tool_response`, or `output` / `result_json` of other agents.
pub(crate) fn tool_output(event: &EventRecord) -> Option<&Value> {
    ["tool_response", "output", "result_json"]
        .iter()
        .find_map(|key| event.payload.get(*key).filter(|v| !v.is_null()))
}

/// The file or directory the tool worked on: `file_path`, `notebook_path` or
/// `path` of its input, else a top-level `file_path`.
pub(crate) fn file_path(event: &EventRecord) -> Option<&str> {
    let from_input = tool_input(event).and_then(|input| {
        ["file_path", "notebook_path", "path"]
            .iter()
            .find_map(|key| str_field(input, key))
    });
    from_input
        .or_else(|| str_field(&event.payload, "file_path"))
        .filter(|p| !p.trim().is_empty())
}

/// The shell command: the input's `command`, else a top-level `command`.
pub(crate) fn command(event: &EventRecord) -> Option<&str> {
    tool_input(event)
        .and_then(|input| str_field(input, "command"))
        .or_else(|| str_field(&event.payload, "command"))
        .filter(|c| !c.trim().is_empty())
}

/// The search pattern of Grep/Glob.
pub(crate) fn pattern(event: &EventRecord) -> Option<&str> {
    tool_input(event).and_then(|input| str_field(input, "pattern"))
}

/// Whether the tool failed: a `PostToolUseFailure`, an interrupt, an `error`,
/// a non-zero exit code, or a stderr line that reads as a failure.
pub(crate) fn failed(event: &EventRecord) -> bool {
    event.event_type == "PostToolUseFailure"
        || interrupted(event)
        || error_text(event).is_some()
        || exit_code(event).is_some_and(|code| code != 0)
        || stderr(event).is_some_and(|s| s.lines().any(is_failure_line))
        || output_text(event).is_some_and(nonzero_exit_line)
}

/// The first line that tells what went wrong, when the event failed: from
/// `error`, else stderr, else the output, trimmed to a short line.
pub(crate) fn error_line(event: &EventRecord) -> Option<String> {
    if !failed(event) {
        return None;
    }
    let line = error_text(event)
        .and_then(|e| {
            failure_excerpt(e).or_else(|| past_exit_code(e).and_then(|l| first_line(l, ERROR_LINE_CHARS)))
        })
        .or_else(|| stderr(event).and_then(failure_excerpt))
        .or_else(|| output_text(event).and_then(|o| first_line(o, ERROR_LINE_CHARS)));
    line.or_else(|| interrupted(event).then(|| "interrupted".to_string()))
}

/// The text after a leading `Exit code N` line when more follows (Claude
/// Code's failed Bash: `Exit code 101` then the output), else the text:
/// the exit code alone does not say what failed.
fn past_exit_code(text: &str) -> Option<&str> {
    let trimmed = text.trim_start();
    let (first, rest) = trimmed.split_once('\n').unwrap_or((trimmed, ""));
    let is_exit_code = first
        .trim()
        .strip_prefix("Exit code ")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '-'));
    Some(if is_exit_code && !rest.trim().is_empty() {
        rest
    } else {
        text
    })
}

/// Whether a line reads as a failure: it starts with `error`, `fatal`,
/// `panic` or `traceback`, mentions `: error`, `panicked at`, or `failed`
/// (but not `0 failed`).
fn is_failure_line(line: &str) -> bool {
    let l = line.trim().to_lowercase();
    ["error", "fatal", "panic", "traceback"]
        .iter()
        .any(|p| l.starts_with(p))
        || l.contains(": error")
        || l.contains("panicked at")
        || (l.contains("failed") && !l.contains(" 0 failed") && !l.starts_with("0 failed"))
}

/// The first failure line of `text` with the lines that say what failed
/// (a Rust panic's message, an assertion's `left:`): up to
/// [`ERROR_EXCERPT_LINES`] lines, stopping at a blank line or a stack
/// frame, joined by spaces and cut at [`ERROR_LINE_CHARS`].
pub(crate) fn failure_excerpt(text: &str) -> Option<String> {
    // `SyntaxError: …`, `java.io.IOException: …` name the failure too.
    let names_it = |line: &str| {
        let l = line.to_lowercase();
        is_failure_line(line) || l.contains("error:") || l.contains("exception:")
    };
    let mut lines = text.lines().skip_while(|line| !names_it(line));
    let first = lines.next()?.trim();
    let rest = lines
        .map(str::trim)
        .take_while(|l| {
            !l.is_empty()
                && !l.starts_with("at ")
                && !l.starts_with("File \"")
                && !l.starts_with("note:")
                && !is_log_record(l)
        })
        .take(ERROR_EXCERPT_LINES - 1);
    let joined = std::iter::once(first).chain(rest).collect::<Vec<_>>().join(" ");
    first_line(&joined, ERROR_LINE_CHARS)
}

/// Whether a line starts a log record of its own (a timestamp, or a level
/// first): it follows the failure but is not part of it.
fn is_log_record(line: &str) -> bool {
    let line = line.trim_start_matches('[');
    let dated =
        line.len() > 5 && line.as_bytes()[..4].iter().all(u8::is_ascii_digit) && line.as_bytes()[4] == b'-';
    let leveled = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].iter().any(|level| {
        line.strip_prefix(level)
            .is_some_and(|rest| rest.starts_with([' ', ']', ':']))
    });
    dated || leveled
}

/// The text of a Read: Claude Code's `file.content`, else a `content`
/// string, else the output as text.
pub(crate) fn read_content(event: &EventRecord) -> Option<&str> {
    let output = tool_output(event)?;
    output
        .get("file")
        .and_then(|f| f.get("content"))
        .and_then(Value::as_str)
        .or_else(|| output.get("content").and_then(Value::as_str))
        .or_else(|| output.as_str())
}

/// A JSON value as text: strings as they are, anything else as compact JSON.
pub(crate) fn value_text(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(s) => std::borrow::Cow::Borrowed(s),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// A non-empty `error`: a string, or any other non-null, non-false value.
fn error_text(event: &EventRecord) -> Option<&str> {
    match event.payload.get("error")? {
        Value::String(s) if !s.trim().is_empty() => Some(s),
        Value::Object(o) => o.get("message").and_then(Value::as_str).or(Some("error")),
        Value::Null | Value::Bool(false) | Value::String(_) => None,
        _ => Some("error"),
    }
}

/// `is_interrupt` of a failure, or `interrupted` of a Bash response.
fn interrupted(event: &EventRecord) -> bool {
    let flag = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
    flag(event.payload.get("is_interrupt")) || flag(tool_output(event).and_then(|o| o.get("interrupted")))
}

/// An exit code from the output (`exit_code`, `exitCode`, `returnCode`,
/// `return_code`) or the payload (`exit_code`), number or numeric string.
pub(crate) fn exit_code(event: &EventRecord) -> Option<i64> {
    let from = |v: &Value| {
        ["exit_code", "exitCode", "returnCode", "return_code"]
            .iter()
            .find_map(|key| as_int(v.get(*key)?))
    };
    tool_output(event).and_then(from).or_else(|| from(&event.payload))
}

/// The output's `stderr`.
fn stderr(event: &EventRecord) -> Option<&str> {
    tool_output(event).and_then(|o| str_field(o, "stderr"))
}

/// What a command printed: the output's `stdout`, else the output as text.
pub(crate) fn shell_output(event: &EventRecord) -> Option<&str> {
    tool_output(event)
        .and_then(|o| str_field(o, "stdout"))
        .or_else(|| output_text(event))
        .filter(|o| !o.trim().is_empty())
}

/// The output when it is plain text.
fn output_text(event: &EventRecord) -> Option<&str> {
    tool_output(event).and_then(Value::as_str)
}

/// Whether text starts with `Exit code N` for a non-zero N (Claude Code's
/// text for a failed command).
fn nonzero_exit_line(text: &str) -> bool {
    text.trim_start()
        .strip_prefix("Exit code ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<i64>().ok())
        .is_some_and(|code| code != 0)
}

fn as_int(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| value.as_str()?.trim().parse().ok())
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::generation::prompt::fixtures::event;

    fn bash(response: Value) -> EventRecord {
        event(
            "PostToolUse",
            Some("Bash"),
            json!({"tool_input": {"command": "cargo test"}, "tool_response": response}),
        )
    }

    #[test]
    fn accessors_read_claude_code_payloads() {
        let read = event(
            "PostToolUse",
            Some("Read"),
            json!({"tool_input": {"file_path": "/a.rs"}}),
        );
        assert_eq!(file_path(&read), Some("/a.rs"));
        assert_eq!(tool_kind(&read), ToolKind::Read);
        let grep = event(
            "PostToolUse",
            None,
            json!({"tool_name": "Grep", "tool_input": {"pattern": "fn", "path": "src"}}),
        );
        assert_eq!(
            (tool_name(&grep), file_path(&grep), pattern(&grep)),
            (Some("Grep"), Some("src"), Some("fn"))
        );
        assert_eq!(tool_kind(&grep), ToolKind::Search);
        let cursor = event(
            "afterShellExecution",
            None,
            json!({"command": "ls", "output": "a\nb"}),
        );
        assert_eq!(
            (command(&cursor), tool_kind(&cursor)),
            (Some("ls"), ToolKind::Shell)
        );
        assert!(is_tool_outcome(&cursor) && !failed(&cursor));
    }

    #[test]
    fn accessors_tolerate_wrong_types() {
        let odd = event(
            "PostToolUse",
            Some("Edit"),
            json!({"tool_input": [1, 2], "error": false, "prompt": 3}),
        );
        assert_eq!((file_path(&odd), command(&odd), prompt(&odd)), (None, None, None));
        assert!(!failed(&odd));
        let scalar = event("PostToolUse", Some("Bash"), json!("just a string"));
        assert!(command(&scalar).is_none() && !failed(&scalar));
    }

    #[test]
    fn failures_are_detected_from_each_signal() {
        assert!(failed(&event("PostToolUseFailure", Some("Bash"), json!({}))));
        assert!(failed(&bash(
            json!({"stdout": "", "stderr": "error[E0308]: mismatched types", "interrupted": false})
        )));
        assert!(failed(&bash(
            json!({"stdout": "", "stderr": "", "interrupted": true})
        )));
        assert!(failed(&bash(json!({"exit_code": "2"}))));
        assert!(failed(&bash(json!("Exit code 101\nfailures:"))));
        let ok = bash(
            json!({"stdout": "test result: ok. 3 passed; 0 failed", "stderr": "   Compiling x\nwarning: unused `std::error::Error`"}),
        );
        assert!(!failed(&ok));
        assert_eq!(error_line(&ok), None);
    }

    #[test]
    fn error_line_prefers_error_then_stderr() {
        // The exit code alone says nothing: the line that says what failed,
        // else the first line after it, else the exit code.
        let failure = |error: &str| {
            event(
                "PostToolUseFailure",
                Some("Bash"),
                json!({"error": error, "is_interrupt": false}),
            )
        };
        assert_eq!(
            error_line(&failure("\nExit code 1\nboom")).as_deref(),
            Some("boom")
        );
        let cargo = "Exit code 101\n   Compiling app v0.1.0\nerror[E0382]: borrow of moved value: `cfg`\n  --> src/main.rs:9:5";
        assert_eq!(
            error_line(&failure(cargo)).as_deref(),
            Some("error[E0382]: borrow of moved value: `cfg` --> src/main.rs:9:5"),
            "the lines under the failure line come with it: here, where it is"
        );
        assert_eq!(
            error_line(&failure("Exit code 2")).as_deref(),
            Some("Exit code 2")
        );
        assert_eq!(
            error_line(&failure("permission denied\nmore")).as_deref(),
            Some("permission denied")
        );
        let stderr = bash(json!({"stderr": "Compiling\nerror: could not compile `x`\nmore"}));
        assert_eq!(
            error_line(&stderr).as_deref(),
            Some("error: could not compile `x` more")
        );
        let interrupted = event("PostToolUseFailure", Some("Bash"), json!({"is_interrupt": true}));
        assert_eq!(error_line(&interrupted).as_deref(), Some("interrupted"));
    }

    #[test]
    fn an_error_excerpt_keeps_what_the_failure_line_introduces() {
        let failure = |error: &str| {
            error_line(&event(
                "PostToolUseFailure",
                Some("Bash"),
                json!({"error": error}),
            ))
        };
        // A Rust panic says its message on the next line, an assertion its values.
        let panic = "Exit code 101\nrunning 3 tests\n\nthread 'golden' panicked at src/export/csv.rs:140:5:\ngolden file differs: expected 4 columns, found 5\nnote: run with `RUST_BACKTRACE=1`";
        assert_eq!(
            failure(panic).as_deref(),
            Some(
                "thread 'golden' panicked at src/export/csv.rs:140:5: golden file differs: expected 4 columns, found 5"
            )
        );
        let assertion = "thread 't' panicked at src/total.rs:88:9:\nassertion `left == right` failed\n  left: 10.000000000000002\n right: 10.0";
        assert_eq!(
            failure(assertion).as_deref(),
            Some(
                "thread 't' panicked at src/total.rs:88:9: assertion `left == right` failed left: 10.000000000000002"
            )
        );
        // Node names the error by its class; the stack frames stay out.
        let node =
            "undefined:1\n\n\nSyntaxError: Unexpected end of JSON input\n    at JSON.parse (<anonymous>)";
        assert_eq!(
            failure(node).as_deref(),
            Some("SyntaxError: Unexpected end of JSON input")
        );
        let stderr = bash(json!({"exit_code": 1, "stderr": node}));
        assert_eq!(
            error_line(&stderr).as_deref(),
            Some("SyntaxError: Unexpected end of JSON input")
        );
        // A blank line ends the excerpt, and so does the next log record.
        assert_eq!(
            failure("error: linker failed\n\nmore").as_deref(),
            Some("error: linker failed")
        );
        let log = "Error: timed out waiting for a connection from the pool after 4000ms\n2024-03-02T21:07:57Z DEBUG ledger::core: parse batch\n[INFO] retrying";
        assert_eq!(
            failure(log).as_deref(),
            Some("Error: timed out waiting for a connection from the pool after 4000ms")
        );
        assert!(is_log_record("[2024-03-02 21:07:57] worker up") && is_log_record("WARN: slow"));
        assert!(!is_log_record("left: 10.000000000000002") && !is_log_record("Caused by: EOF"));
    }
}
