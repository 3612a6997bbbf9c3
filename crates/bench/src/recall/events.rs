//! A session as the Claude Code hook events an agent would post: SessionStart,
//! then per turn UserPromptSubmit, PreToolUse and PostToolUse (or
//! PostToolUseFailure) per tool call, Stop; SessionEnd. Payload shapes
//! follow Claude Code's (as `cairn_testkit::cc` and the prompt_tokens bench).

use std::collections::HashMap;

use cairn_testkit::cc;
use serde_json::{Value, json};

use super::{
    data::{Session, Tool},
    noise::expand,
};

/// One hook body, in posting order.
pub struct HookEvent {
    pub body: Value,
    /// The turn it belongs to (1-based), if any.
    pub turn: Option<usize>,
}

/// The hook events of `session`, whose agent works in `cwd`.
pub fn session_events(session: &Session, cwd: &str) -> Vec<HookEvent> {
    let sid = format!("recall-{}", session.id);
    let hook = |event: &str, extra: Value| {
        let mut body = cc(&sid, event, extra);
        body["cwd"] = cwd.into();
        body["transcript_path"] =
            format!("/home/dev/.claude/projects/{}/{sid}.jsonl", session.project).into();
        body
    };
    let abs = |path: &str| format!("{cwd}/{path}");
    let mut out = vec![HookEvent {
        body: hook("SessionStart", json!({ "source": "startup" })),
        turn: None,
    }];
    let mut files: HashMap<String, String> = HashMap::new();
    for (t, turn) in session.turns.iter().enumerate() {
        let number = Some(t + 1);
        out.push(HookEvent {
            body: hook("UserPromptSubmit", json!({ "prompt": turn.prompt })),
            turn: number,
        });
        for (k, tool) in turn.tools.iter().enumerate() {
            let id = format!("toolu_{}_{t:02}_{k:02}", session.id.replace('-', "_"));
            let seed = format!("{}/{t}/{k}", session.id);
            let (name, input, outcome) = call(tool, &seed, &abs, &mut files);
            out.push(HookEvent {
                body: hook(
                    "PreToolUse",
                    json!({ "tool_name": name, "tool_use_id": id, "tool_input": input }),
                ),
                turn: number,
            });
            let body = match outcome {
                Ok(response) => hook(
                    "PostToolUse",
                    json!({ "tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": response }),
                ),
                Err(error) => hook(
                    "PostToolUseFailure",
                    json!({ "tool_name": name, "tool_use_id": id, "tool_input": input,
                            "error": error, "is_interrupt": false }),
                ),
            };
            out.push(HookEvent { body, turn: number });
        }
        out.push(HookEvent {
            body: hook(
                "Stop",
                json!({ "last_assistant_message": turn.stop, "stop_hook_active": false }),
            ),
            turn: number,
        });
    }
    out.push(HookEvent {
        body: hook("SessionEnd", json!({ "reason": "other" })),
        turn: None,
    });
    out
}

/// All of a session's hook events as one text (for checking where facts are).
pub fn session_text(session: &Session, cwd: &str) -> String {
    session_events(session, cwd)
        .iter()
        .map(|e| text_of(&e.body))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every string in `value`, one per line (unescaped, unlike its JSON).
pub fn text_of(value: &Value) -> String {
    let mut out = String::new();
    collect(value, &mut out);
    out
}

fn collect(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect(v, out)),
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

type Outcome = Result<Value, String>;

/// The tool's name, input and response (or failure text).
fn call(
    tool: &Tool,
    seed: &str,
    abs: &dyn Fn(&str) -> String,
    files: &mut HashMap<String, String>,
) -> (&'static str, Value, Outcome) {
    match tool {
        Tool::Read { path, content } => {
            let content = expand(content, seed);
            let lines = content.lines().count();
            files.insert(path.clone(), content.clone());
            (
                "Read",
                json!({ "file_path": abs(path) }),
                Ok(
                    json!({ "type": "text", "file": { "filePath": abs(path), "content": content,
                    "numLines": lines, "startLine": 1, "totalLines": lines } }),
                ),
            )
        }
        Tool::Bash {
            command,
            stdout,
            stderr,
            exit,
        } => {
            let (stdout, stderr) = (expand(stdout, seed), expand(stderr, &format!("{seed}/err")));
            let input = json!({ "command": command, "description": format!("Run {command}") });
            let outcome = if *exit == 0 {
                Ok(json!({ "stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false }))
            } else {
                let output = [stdout.as_str(), stderr.as_str()]
                    .into_iter()
                    .filter(|s| !s.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                Err(format!("Exit code {exit}\n{output}"))
            };
            ("Bash", input, outcome)
        }
        Tool::Edit { path, old, new } => {
            let original = files.get(path).cloned();
            if let Some(text) = &original {
                files.insert(path.clone(), text.replacen(old.as_str(), new, 1));
            }
            let diff: Vec<String> = old
                .lines()
                .map(|l| format!("-{l}"))
                .chain(new.lines().map(|l| format!("+{l}")))
                .collect();
            (
                "Edit",
                json!({ "file_path": abs(path), "old_string": old, "new_string": new, "replace_all": false }),
                Ok(json!({ "filePath": abs(path), "oldString": old, "newString": new,
                    "originalFile": original, "userModified": false, "replaceAll": false,
                    "structuredPatch": [{ "oldStart": 1, "oldLines": old.lines().count(), "newStart": 1,
                        "newLines": new.lines().count(), "lines": diff }] })),
            )
        }
        Tool::Write { path, content } => {
            let content = expand(content, seed);
            files.insert(path.clone(), content.clone());
            (
                "Write",
                json!({ "file_path": abs(path), "content": content }),
                Ok(
                    json!({ "type": "create", "filePath": abs(path), "content": content, "structuredPatch": [] }),
                ),
            )
        }
        Tool::Grep { pattern, content } => {
            let content = expand(content, seed);
            let lines = content.lines().count();
            (
                "Grep",
                json!({ "pattern": pattern, "path": abs("").trim_end_matches('/'), "output_mode": "content", "-n": true }),
                Ok(
                    json!({ "mode": "content", "numFiles": lines.div_ceil(3), "filenames": [],
                    "content": content, "numLines": lines }),
                ),
            )
        }
        Tool::Glob {
            pattern,
            files: found,
        } => {
            let paths: Vec<String> = found.iter().map(|f| abs(f)).collect();
            (
                "Glob",
                json!({ "pattern": pattern }),
                Ok(
                    json!({ "filenames": paths, "durationMs": 12, "numFiles": paths.len(), "truncated": false }),
                ),
            )
        }
        Tool::TodoWrite { todos } => {
            let todos: Vec<Value> = todos
                .iter()
                .map(|t| json!({ "content": t.content, "status": t.status, "activeForm": t.content }))
                .collect();
            (
                "TodoWrite",
                json!({ "todos": todos }),
                Ok(json!({ "oldTodos": [], "newTodos": todos })),
            )
        }
    }
}
