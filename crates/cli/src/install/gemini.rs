//! Gemini CLI: `.gemini/settings.json` (project) or `~/.gemini/settings.json`
//! (user): `hooks` in nested groups with timeouts in milliseconds, and
//! `mcpServers` in the same file.

use serde_json::Value;

use super::{
    Setup,
    command::is_cairn_hook,
    hooks::{HookSet, Shape},
    json_edit,
    target::{JsonEdit, Kind, Target},
};
use crate::agent::Agent;

const TIMEOUT_MS: u64 = 10_000;

/// Events Cairn uses; not BeforeModel/AfterModel (they fire per streamed
/// chunk) nor BeforeToolSelection. No matcher: absent matches every tool.
const EVENTS: [&str; 7] = [
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "PreCompress",
    "SessionEnd",
];

fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_cairn_hook(c, Agent::Gemini))
}

pub fn hook_set(setup: &Setup) -> HookSet {
    let handler = json_edit::object(vec![
        ("name", json_edit::string("cairn")),
        ("type", json_edit::string("command")),
        (
            "command",
            json_edit::string(&setup.program.hook_command(Agent::Gemini)),
        ),
        ("timeout", json_edit::number(TIMEOUT_MS)),
    ]);
    HookSet::uniform(Shape::Nested, &EVENTS, handler, is_ours)
}

pub fn targets(setup: &Setup) -> Vec<Target> {
    vec![Target {
        path: setup.place.scoped(".gemini/settings.json"),
        kind: Kind::Json(vec![
            JsonEdit::Hooks(hook_set(setup)),
            JsonEdit::Mcp {
                key: "mcpServers",
                program: setup.program.exec.clone(),
            },
        ]),
    }]
}
