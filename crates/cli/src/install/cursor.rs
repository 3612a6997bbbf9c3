//! Cursor: `.cursor/hooks.json` (project) or `~/.cursor/hooks.json` (user),
//! `{"version": 1, "hooks": {"<event>": [{"command": "…"}]}}`; MCP in
//! `.cursor/mcp.json` or `~/.cursor/mcp.json` under `mcpServers`.

use serde_json::Value;

use super::{
    Setup,
    command::is_cairn_hook,
    hooks::{HookSet, Shape},
    json_edit,
    target::{JsonEdit, Kind, Target},
};
use crate::agent::Agent;

/// The agent events Cairn uses. `postToolUse` covers every tool, so the
/// per-kind events (afterShellExecution, afterMCPExecution, afterFileEdit)
/// would only repeat it. No permission event (preToolUse, beforeShellExecution,
/// beforeReadFile): Cursor reads a decision from those, and Cairn never allows
/// or denies on the user's behalf.
const EVENTS: [&str; 9] = [
    "sessionStart",
    "beforeSubmitPrompt",
    "postToolUse",
    "postToolUseFailure",
    "afterAgentResponse",
    "subagentStop",
    "preCompact",
    "stop",
    "sessionEnd",
];

fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_cairn_hook(c, Agent::Cursor))
}

pub fn hook_set(setup: &Setup) -> HookSet {
    let handler = json_edit::object(vec![(
        "command",
        json_edit::string(&setup.program.hook_command(Agent::Cursor)),
    )]);
    HookSet {
        top_level: vec![("version", json_edit::number(1))],
        ..HookSet::uniform(Shape::Flat, &EVENTS, handler, is_ours)
    }
}

pub fn targets(setup: &Setup) -> Vec<Target> {
    // Same layout under the project root and under the home directory.
    let place = &setup.place;
    vec![
        Target {
            path: place.scoped(".cursor/hooks.json"),
            kind: Kind::Json(vec![JsonEdit::Hooks(hook_set(setup))]),
        },
        Target {
            path: place.scoped(".cursor/mcp.json"),
            kind: Kind::Json(vec![JsonEdit::Mcp {
                key: "mcpServers",
                program: setup.program.exec.clone(),
            }]),
        },
    ]
}
