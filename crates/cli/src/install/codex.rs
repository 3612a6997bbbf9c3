//! Codex: `.codex/hooks.json` (project; Codex loads it once the project is
//! trusted) or `$CODEX_HOME/hooks.json` (default `~/.codex`), nested groups
//! like Claude Code's, timeouts in seconds; MCP as `[mcp_servers.cairn]` in
//! the `config.toml` beside it.

use serde_json::Value;

use super::{
    Setup,
    command::is_cairn_hook,
    hooks::{HookSet, Shape},
    json_edit,
    scope::Scope,
    target::{JsonEdit, Kind, Target},
};
use crate::agent::Agent;

const TIMEOUT_S: u64 = 10;

/// Events Cairn uses. No matcher: Codex honours one only on tool events, and
/// an absent matcher matches everything.
const EVENTS: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "Stop",
    "SubagentStop",
];

fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_cairn_hook(c, Agent::Codex))
}

pub fn hook_set(setup: &Setup) -> HookSet {
    let handler = json_edit::object(vec![
        ("type", json_edit::string("command")),
        (
            "command",
            json_edit::string(&setup.program.hook_command(Agent::Codex)),
        ),
        ("timeout", json_edit::number(TIMEOUT_S)),
    ]);
    HookSet::uniform(Shape::Nested, &EVENTS, handler, is_ours)
}

pub fn targets(setup: &Setup) -> Vec<Target> {
    let dir = match setup.place.scope {
        Scope::Project => setup.place.scoped(".codex"),
        Scope::User => setup.codex_home.clone(),
    };
    vec![
        Target {
            path: dir.join("hooks.json"),
            kind: Kind::Json(vec![JsonEdit::Hooks(hook_set(setup))]),
        },
        Target {
            path: dir.join("config.toml"),
            kind: Kind::CodexToml {
                program: setup.program.exec.clone(),
            },
        },
    ]
}
