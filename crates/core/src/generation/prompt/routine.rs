//! Events with nothing to remember, left out of observation prompts (and
//! named in one line instead): a successful `ls`/`pwd`/`echo`-like command,
//! a `git status` that shows a clean tree, a TodoWrite repeating the list
//! before it. A failed tool is never routine.

use super::condense::todo_lines;
use super::elide::truncate;
use super::payload::{self, ToolKind};
use crate::generation::material::EventRecord;

/// Commands that only look around.
const LOOK_AROUND: [&str; 9] = [
    "ls", "pwd", "echo", "which", "whoami", "date", "clear", "tree", "true",
];

/// Longest description of a left-out event.
const NOTE_CHARS: usize = 60;

/// The events worth a prompt, in order, and a short note for each left out.
pub(crate) fn split<'a>(events: &[&'a EventRecord]) -> (Vec<&'a EventRecord>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    let mut last_todos: Option<Vec<String>> = None;
    for &event in events {
        if payload::tool_name(event) == Some("TodoWrite") && !payload::failed(event) {
            let todos = todo_lines(event);
            if last_todos.as_ref() == Some(&todos) {
                left_out.push("TodoWrite (unchanged)".to_string());
                continue;
            }
            last_todos = Some(todos);
        }
        match routine_command(event) {
            Some(command) => left_out.push(truncate(command, NOTE_CHARS).into_owned()),
            None => kept.push(event),
        }
    }
    (kept, left_out)
}

/// The command of a successful shell call that shows nothing to remember.
fn routine_command(event: &EventRecord) -> Option<&str> {
    if payload::tool_kind(event) != ToolKind::Shell || payload::failed(event) {
        return None;
    }
    let command = payload::command(event)?.trim();
    let last = command.rsplit("&&").next().unwrap_or(command).trim();
    if last.contains('|') || last.contains('>') || command.contains('\n') {
        return None;
    }
    let program = last.split_whitespace().next().unwrap_or_default();
    if LOOK_AROUND.contains(&program) {
        return Some(command);
    }
    let clean = |text: &str| {
        let t = text.trim();
        t.is_empty() || t.contains("nothing to commit") || t.contains("working tree clean")
    };
    let is_status = last.starts_with("git status");
    let output = payload::tool_output(event)
        .map(|o| {
            o.get("stdout")
                .and_then(|s| s.as_str())
                .map_or_else(|| payload::value_text(o).into_owned(), str::to_string)
        })
        .unwrap_or_default();
    (is_status && clean(&output)).then_some(command)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::generation::prompt::fixtures::event;

    fn shell(command: &str, stdout: &str) -> EventRecord {
        event(
            "PostToolUse",
            Some("Bash"),
            json!({"tool_input": {"command": command}, "tool_response": {"stdout": stdout, "stderr": ""}}),
        )
    }

    fn todo(items: &[(&str, &str)]) -> EventRecord {
        let todos: Vec<_> = items
            .iter()
            .map(|(content, status)| json!({"content": content, "status": status}))
            .collect();
        event(
            "PostToolUse",
            Some("TodoWrite"),
            json!({"tool_input": {"todos": todos}}),
        )
    }

    #[test]
    fn look_around_commands_clean_status_and_repeated_todos_are_left_out() {
        let events = [
            shell("ls -la src", "a.rs\nb.rs"),
            shell("cd app && pwd", "/app"),
            shell(
                "git status",
                "On branch main\nnothing to commit, working tree clean",
            ),
            shell("git status --short", " M src/lib.rs"),
            shell("ls src | wc -l", "2"),
            todo(&[("fix it", "in_progress")]),
            todo(&[("fix it", "in_progress")]),
            todo(&[("fix it", "completed")]),
            event(
                "PostToolUseFailure",
                Some("Bash"),
                json!({"tool_input": {"command": "ls missing"}, "error": "Exit code 2\nls: cannot access 'missing'"}),
            ),
        ];
        let refs: Vec<&EventRecord> = events.iter().collect();
        let (kept, left_out) = split(&refs);
        assert_eq!(
            left_out,
            [
                "ls -la src",
                "cd app && pwd",
                "git status",
                "TodoWrite (unchanged)"
            ]
        );
        assert_eq!(kept.len(), 5);
        assert_eq!(payload::command(kept[0]), Some("git status --short"));
        assert_eq!(payload::command(kept[1]), Some("ls src | wc -l"));
        assert_eq!(payload::command(kept[4]), Some("ls missing"));
    }
}
