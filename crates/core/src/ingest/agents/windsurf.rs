//! Windsurf Cascade's hooks (`.windsurf/hooks.json`) → the event model. A
//! trajectory is a session; each `pre_user_prompt` opens a turn and
//! `post_cascade_response` ends it. Cascade takes no context from hooks, so
//! the answer to a prompt carries the memory as `memoryMarkdown` for
//! `cairn hook windsurf` to write into `.windsurf/rules/cairn-memory.md`.

use serde_json::{Map, Value, json};

use super::{
    Answer, Normalized, Tool, cursor,
    fields::{optional_str, required_str, session_id},
};
use crate::{error::Error, ingest::EventKind};

pub const AGENT: &str = "windsurf";

pub fn normalize(mut input: Map<String, Value>) -> Result<Normalized, Error> {
    let event = required_str(&input, "agent_action_name")?.to_string();
    let session = session_id(&input, "trajectory_id")?.to_string();
    let mut info = match input.remove("tool_info") {
        Some(Value::Object(info)) => info,
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(Error::unprocessable(
                "invalid_field",
                "`tool_info` must be an object",
            ));
        }
    };
    let mut n = Normalized::new(&event, kind(&event), &session);
    n.cwd = optional_str(&info, "cwd")?.map(str::to_string);
    // `execution_id` names the turn, not the tool call: no natural key here.
    match event.as_str() {
        "pre_user_prompt" => n.prompt = Some(required_str(&info, "user_prompt")?.to_string()),
        "post_read_code" => {
            n.tool = Some(Tool::Read);
            n.tool_input = Some(json!({"file_path": required_str(&info, "file_path")?}));
        }
        "post_write_code" => {
            n.tool = Some(Tool::Edit);
            let path = required_str(&info, "file_path")?.to_string();
            n.tool_input = Some(cursor::edit_input(&path, info.remove("edits")));
        }
        "post_run_command" => {
            n.tool = Some(Tool::Shell);
            n.tool_input = Some(json!({"command": required_str(&info, "command_line")?}));
            n.tool_response = info.remove("output").map(|o| json!({"stdout": o}));
        }
        "post_mcp_tool_use" => {
            let server = optional_str(&info, "mcp_server_name")?
                .unwrap_or("mcp")
                .to_string();
            let tool = required_str(&info, "mcp_tool_name")?.to_string();
            n.tool = Some(Tool::Mcp(server, tool));
            n.tool_input = info.remove("mcp_tool_arguments");
            n.tool_response = info.remove("mcp_result");
        }
        "post_cascade_response" => {
            n.last_assistant_message = optional_str(&info, "response")?.map(str::to_string)
        }
        _ => {}
    }
    input.remove("agent_action_name");
    if !info.is_empty() && n.tool.is_none() {
        input.insert("tool_info".into(), Value::Object(info));
    }
    n.extra = input;
    Ok(n)
}

fn kind(event: &str) -> EventKind {
    match event {
        "pre_user_prompt" => EventKind::UserPrompt,
        "pre_read_code" | "pre_write_code" | "pre_run_command" | "pre_mcp_tool_use" => EventKind::PreTool,
        "post_read_code" | "post_write_code" | "post_run_command" | "post_mcp_tool_use" => {
            EventKind::PostTool
        }
        "post_cascade_response" => EventKind::Stop,
        _ => EventKind::Notification,
    }
}

/// `{"memoryMarkdown"}` for the hook client when there is memory, else `{}`.
pub fn answer(_event: &str, context: Option<String>) -> Answer {
    match context {
        Some(markdown) => json!({"memoryMarkdown": markdown}),
        None => json!({}),
    }
}
