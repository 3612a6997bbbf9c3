//! Windsurf (Cascade): `.windsurf/hooks.json` (workspace) or
//! `~/.codeium/windsurf/hooks.json` (user), `{"hooks": {"<event>":
//! [{"command": "…"}]}}`. MCP servers live only in
//! `~/.codeium/windsurf/mcp_config.json`, so both scopes register there (the
//! install records count who relies on it).

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

/// Events Cairn uses: the prompt (memory goes back through a rules file the
/// client writes), what Cascade read, wrote, ran and answered.
const EVENTS: [&str; 6] = [
    "pre_user_prompt",
    "post_read_code",
    "post_write_code",
    "post_run_command",
    "post_mcp_tool_use",
    "post_cascade_response",
];

fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_cairn_hook(c, Agent::Windsurf))
}

pub fn hook_set(setup: &Setup) -> HookSet {
    let handler = json_edit::object(vec![(
        "command",
        json_edit::string(&setup.program.hook_command(Agent::Windsurf)),
    )]);
    HookSet::uniform(Shape::Flat, &EVENTS, handler, is_ours)
}

pub fn targets(setup: &Setup) -> Vec<Target> {
    let place = &setup.place;
    let windsurf_home = place.home.join(".codeium/windsurf");
    let hooks = match place.scope {
        Scope::Project => place.scoped(".windsurf/hooks.json"),
        Scope::User => windsurf_home.join("hooks.json"),
    };
    vec![
        Target {
            path: hooks,
            kind: Kind::Json(vec![JsonEdit::Hooks(hook_set(setup))]),
        },
        Target {
            path: windsurf_home.join("mcp_config.json"),
            kind: Kind::Json(vec![JsonEdit::Mcp {
                key: "mcpServers",
                program: setup.program.exec.clone(),
            }]),
        },
    ]
}
