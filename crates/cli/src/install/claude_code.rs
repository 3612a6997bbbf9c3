//! Claude Code: hooks in `.claude/settings.json` (project) or
//! `~/.claude/settings.json` (user), nested groups, timeouts in seconds; MCP in
//! `.mcp.json` (project) or `~/.claude.json` (user), both under `mcpServers`.

use serde_json::Value;

use super::{
    Setup,
    command::is_cairn_hook,
    hooks::{EventHook, HookSet, Shape},
    json_edit::{self, Json},
    scope::Scope,
    target::{JsonEdit, Kind, Target},
};
use crate::agent::Agent;

/// Seconds Claude Code waits for the hook; the client keeps its own, shorter
/// budget (2 s by default) and always answers.
const TIMEOUT_S: u64 = 10;

/// Every event Cairn uses, and whether it takes a matcher (`*`: all).
const EVENTS: [(&str, Option<&str>); 9] = [
    ("SessionStart", Some("*")),
    ("UserPromptSubmit", None),
    ("PreToolUse", Some("*")),
    ("PostToolUse", Some("*")),
    ("PostToolUseFailure", Some("*")),
    ("Stop", None),
    ("SubagentStop", Some("*")),
    ("PreCompact", Some("*")),
    ("SessionEnd", Some("*")),
];

fn is_ours(handler: &Value) -> bool {
    match handler.get("type").and_then(Value::as_str) {
        Some("http") => handler.get("url").and_then(Value::as_str).is_some_and(|u| {
            u.split('?')
                .next()
                .is_some_and(|p| p.ends_with("/v1/hooks/claude-code"))
        }),
        _ => handler
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_cairn_hook(c, Agent::ClaudeCode)),
    }
}

fn command_handler(setup: &Setup) -> Json {
    json_edit::object(vec![
        ("type", json_edit::string("command")),
        (
            "command",
            json_edit::string(&setup.program.hook_command(Agent::ClaudeCode)),
        ),
        ("timeout", json_edit::number(TIMEOUT_S)),
    ])
}

/// An `http` hook: Claude Code posts the event itself, with the token taken
/// from `$CAIRN_TOKEN` at run time (never written here). No spool: an event
/// sent while Cairn is away is lost.
fn http_handler(url: &str) -> Json {
    json_edit::object(vec![
        ("type", json_edit::string("http")),
        ("url", json_edit::string(url)),
        (
            "headers",
            json_edit::object(vec![("Authorization", json_edit::string("Bearer $CAIRN_TOKEN"))]),
        ),
        (
            "allowedEnvVars",
            Json::Array(vec![json_edit::string("CAIRN_TOKEN")]),
        ),
        ("timeout", json_edit::number(TIMEOUT_S)),
    ])
}

pub fn hook_set(setup: &Setup) -> HookSet {
    let events = EVENTS
        .iter()
        .map(|&(event, matcher)| {
            // SessionStart accepts only command (and mcp_tool) handlers: the
            // memory given back at session start needs `cairn hook`.
            let handler = match &setup.http_url {
                Some(url) if event != "SessionStart" => http_handler(url),
                _ => command_handler(setup),
            };
            EventHook {
                event,
                matcher,
                handler,
            }
        })
        .collect();
    HookSet {
        shape: Shape::Nested,
        events,
        top_level: Vec::new(),
        is_ours,
    }
}

pub fn targets(setup: &Setup) -> Vec<Target> {
    let place = &setup.place;
    let (settings, mcp) = match place.scope {
        Scope::Project => (place.scoped(".claude/settings.json"), place.scoped(".mcp.json")),
        Scope::User => (
            place.home.join(".claude/settings.json"),
            place.home.join(".claude.json"),
        ),
    };
    vec![
        Target {
            path: settings,
            kind: Kind::Json(vec![JsonEdit::Hooks(hook_set(setup))]),
        },
        Target {
            path: mcp,
            kind: Kind::Json(vec![JsonEdit::Mcp {
                key: "mcpServers",
                program: setup.program.exec.clone(),
            }]),
        },
    ]
}
