//! Claude Code's native hook JSON (COMPAT.md §1) → `ParsedHook`, and its
//! hook output format. Its JSON is already the model's vocabulary, so the
//! payload is the input as it came.

use serde_json::{Map, Value, json};

use super::{
    Answer, HookRequest, ParsedHook,
    fields::{optional_str, required_str, session_id},
    normalized::{Identity, moment},
};
use crate::{error::Error, ingest::EventKind};

pub const AGENT: &str = "claude-code";

pub fn parse(input: Map<String, Value>, request: &HookRequest<'_>) -> Result<ParsedHook, Error> {
    let session_id = session_id(&input, "session_id")?;
    let hook = required_str(&input, "hook_event_name")?;
    // An event Cairn does not know yet is stored and answered `{}`, never refused.
    let kind = EventKind::from_claude_code(hook).unwrap_or(EventKind::Notification);
    let cwd = optional_str(&input, "cwd")?;
    optional_str(&input, "transcript_path")?;
    let tool_name = match kind {
        EventKind::PreTool | EventKind::PostTool | EventKind::ToolFailure => {
            Some(required_str(&input, "tool_name")?)
        }
        _ => optional_str(&input, "tool_name")?,
    };
    let prompt = match kind {
        EventKind::UserPrompt => Some(required_str(&input, "prompt")?),
        _ => None,
    };
    let source = optional_str(&input, "source")?.map(str::to_string);
    let identity = Identity {
        agent: AGENT,
        session_id,
        event_name: hook,
        tool_use_id: optional_str(&input, "tool_use_id")?,
        prompt,
    };
    let event = identity.incoming(
        request,
        kind,
        cwd.map(str::to_string),
        tool_name.map(str::to_string),
        prompt.map(str::to_string),
        Value::Object(input.clone()),
    );
    Ok(ParsedHook {
        event,
        agent_event: hook.to_string(),
        moment: moment(kind),
        source,
    })
}

/// The hook answer: `additionalContext` for SessionStart (and prompts and
/// file tools, when given), `{}` otherwise. PreCompact may not carry
/// hookSpecificOutput.
pub fn answer(hook_event_name: &str, additional_context: Option<String>) -> Answer {
    hook_specific_output(
        hook_event_name,
        &["SessionStart", "UserPromptSubmit", "PreToolUse"],
        additional_context,
    )
}

/// `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}` for the
/// events that take it, `{}` otherwise; Codex and Gemini CLI answer alike.
pub fn hook_specific_output(event: &str, takes_context: &[&str], context: Option<String>) -> Answer {
    match context {
        Some(context) if takes_context.contains(&event) => json!({
            "hookSpecificOutput": { "hookEventName": event, "additionalContext": context }
        }),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::agents::{HookAgent, fields::object};

    fn parse_body(body: &[u8], header: Option<&str>) -> Result<ParsedHook, Error> {
        let request = HookRequest {
            body,
            idempotency_key: header,
            occurred_at: chrono::Utc::now(),
        };
        HookAgent::ClaudeCode.parse(&request)
    }

    #[test]
    fn tool_events_are_keyed_by_tool_use_id() {
        let body =
            br#"{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1",
            "tool_input":{"command":"ls"},"tool_response":{"stdout":""},"cwd":"/r"}"#;
        let ev = parse_body(body, Some("ignored-when-the-tool-has-an-id"))
            .unwrap()
            .event;
        assert_eq!(ev.kind, EventKind::PostTool);
        assert_eq!(ev.idempotency_key, "cc:s1:PostToolUse:t1");
        assert_eq!(ev.tool_name.as_deref(), Some("Bash"));
        assert!(!ev.key_per_turn);
    }

    #[test]
    fn id_less_prompts_are_keyed_by_their_text() {
        let a = parse_body(
            br#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
            None,
        );
        let b = parse_body(
            br#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hi","permission_mode":"x"}"#,
            None,
        );
        let (a, b) = (a.unwrap().event, b.unwrap().event);
        assert_eq!(a.idempotency_key, b.idempotency_key);
        assert!(a.key_per_turn);
        let crate::ingest::SessionTarget::Agent(key) = &a.session else {
            panic!()
        };
        assert!(key.prompt_hash.is_some());
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let err = parse_body(br#"{"hook_event_name":"Stop"}"#, None).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("missing_field", 422));
        let err = parse_body(br#"{"session_id":5,"hook_event_name":"Stop"}"#, None).unwrap_err();
        assert_eq!(err.code, "invalid_field");
        let err = parse_body(br#"{"session_id":"s","hook_event_name":"PostToolUse"}"#, None).unwrap_err();
        assert!(err.message.contains("tool_name"));
        assert_eq!(object(b"[1]").unwrap_err().code, "invalid_body");
        assert_eq!(object(b"{").unwrap_err().code, "invalid_json");
    }

    #[test]
    fn answers_follow_the_hook_output_format() {
        let a = answer("SessionStart", Some("ctx".into()));
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "ctx");
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(answer("PreCompact", Some("x".into())), json!({}));
        assert_eq!(answer("PostToolUse", None), json!({}));
    }
}
