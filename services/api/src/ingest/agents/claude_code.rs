//! Claude Code's native hook JSON (COMPAT.md §1) → `IncomingEvent`, and the
//! hook output format of its answers.

use serde_json::{Map, Value, json};

use super::{EventKind, IncomingEvent, SessionTarget, idempotency_key_from_body};
use crate::{error::ApiError, store::sessions::SessionKey};

pub const AGENT: &str = "claude-code";

/// Parses one hook input. `body` is the raw request, hashed into the
/// idempotency key of events that carry no `tool_use_id`.
pub fn parse(body: &[u8], idempotency_header: Option<&str>) -> Result<IncomingEvent, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the hook body is not valid JSON: {e}"))
    })?;
    let Value::Object(input) = value else {
        return Err(ApiError::unprocessable(
            "invalid_body",
            "the hook body must be a JSON object",
        ));
    };
    let session_id = required_str(&input, "session_id")?;
    if session_id.len() > 256 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`session_id` is longer than 256 characters",
        ));
    }
    let hook = required_str(&input, "hook_event_name")?;
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
        EventKind::UserPrompt => Some(required_str(&input, "prompt")?.to_string()),
        _ => None,
    };
    let tool_use_id = optional_str(&input, "tool_use_id")?;
    let idempotency_key = match (tool_use_id, idempotency_header) {
        (Some(id), _) => format!("cc:{session_id}:{hook}:{id}"),
        (None, Some(h)) => format!("hdr:{h}"),
        (None, None) => idempotency_key_from_body("cc-body", body),
    };
    let key = SessionKey {
        agent: AGENT.into(),
        external_session_id: session_id.to_string(),
        content_session_id: Some(session_id.to_string()),
        platform_source: Some(AGENT.into()),
        cwd: cwd.map(str::to_string),
        ..Default::default()
    };
    Ok(IncomingEvent {
        source_adapter: AGENT.into(),
        source_type: "hook".into(),
        event_type: hook.to_string(),
        kind,
        session: SessionTarget::Agent(key),
        platform_source: Some(AGENT.into()),
        source_event_id: tool_use_id.map(str::to_string),
        key_per_turn: tool_use_id.is_none() && idempotency_header.is_none(),
        idempotency_key,
        tool_name: tool_name.map(str::to_string),
        prompt,
        payload: Value::Object(input.clone()),
        metadata: json!({}),
        occurred_at: chrono::Utc::now(),
        generate: true,
        seal_now: false,
    })
}

fn required_str<'a>(input: &'a Map<String, Value>, field: &str) -> Result<&'a str, ApiError> {
    match input.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(ApiError::unprocessable(
            "invalid_field",
            format!("`{field}` is empty"),
        )),
        Some(_) => Err(ApiError::unprocessable(
            "invalid_field",
            format!("`{field}` must be a string"),
        )),
        None => Err(ApiError::unprocessable(
            "missing_field",
            format!("`{field}` is required"),
        )),
    }
}

fn optional_str<'a>(input: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, ApiError> {
    match input.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::unprocessable(
            "invalid_field",
            format!("`{field}` must be a string"),
        )),
    }
}

/// The hook answer: `additionalContext` for SessionStart (and prompts, when
/// given), `{}` otherwise. PreCompact may not carry hookSpecificOutput.
pub fn answer(hook_event_name: &str, additional_context: Option<String>) -> Value {
    match (hook_event_name, additional_context) {
        ("SessionStart" | "UserPromptSubmit", Some(context)) => json!({
            "hookSpecificOutput": { "hookEventName": hook_event_name, "additionalContext": context }
        }),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_events_are_keyed_by_tool_use_id() {
        let body =
            br#"{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1",
            "tool_input":{"command":"ls"},"tool_response":{"stdout":""},"cwd":"/r"}"#;
        let ev = parse(body, None).unwrap();
        assert_eq!(ev.kind, EventKind::PostTool);
        assert_eq!(ev.idempotency_key, "cc:s1:PostToolUse:t1");
        assert_eq!(ev.tool_name.as_deref(), Some("Bash"));
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let err = parse(br#"{"hook_event_name":"Stop"}"#, None).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("missing_field", 422));
        let err = parse(br#"{"session_id":5,"hook_event_name":"Stop"}"#, None).unwrap_err();
        assert_eq!(err.code, "invalid_field");
        let err = parse(br#"{"session_id":"s","hook_event_name":"PostToolUse"}"#, None).unwrap_err();
        assert!(err.message.contains("tool_name"));
        assert_eq!(parse(b"[1]", None).unwrap_err().code, "invalid_body");
        assert_eq!(parse(b"{", None).unwrap_err().code, "invalid_json");
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
