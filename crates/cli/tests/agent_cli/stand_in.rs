//! A stand-in for the model APIs agent CLIs call, on 127.0.0.1: Anthropic's
//! Messages API (Claude Code), OpenAI's Responses API (Codex) and the Gemini
//! API (Gemini CLI). It records every request and plays one script on each
//! wire: ask for a tool call that reads a given file, then, once the tool's
//! result comes back, answer a final text.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use axum::{
    Json, Router,
    body::Bytes,
    extract::State,
    http::{Method, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

/// One request as it reached the stand-in.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub body: Value,
}

impl Recorded {
    /// Every string inside the body, in document order: where an agent puts
    /// hook context (system blocks, message text, input items) does not
    /// matter to the test.
    pub fn strings(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_strings(&self.body, &mut out);
        out
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

#[derive(Clone)]
struct Script {
    /// The file the scripted tool call reads (an absolute path).
    read_path: String,
    final_text: String,
    log: Arc<Mutex<Vec<Recorded>>>,
}

pub struct StandIn {
    pub base: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl StandIn {
    pub async fn start(read_path: &str, final_text: &str) -> StandIn {
        let log = Arc::new(Mutex::new(Vec::new()));
        let script = Script {
            read_path: read_path.to_string(),
            final_text: final_text.to_string(),
            log: log.clone(),
        };
        // Every route goes through one handler, so that a call we did not
        // expect is still recorded (and answered 404) rather than lost.
        let app = Router::new().fallback(handle).with_state(script);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        StandIn { base, log, server }
    }

    /// Everything recorded since the last `take`: one session's requests.
    pub fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

async fn handle(State(script): State<Script>, method: Method, uri: Uri, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    script.log.lock().unwrap().push(Recorded {
        method: method.to_string(),
        path: uri.to_string(),
        body: body.clone(),
    });
    let path = uri.path();
    let streaming = body["stream"].as_bool() == Some(true);
    match (method, path) {
        (Method::POST, "/v1/messages/count_tokens") => Json(json!({ "input_tokens": 1000 })).into_response(),
        (Method::POST, "/v1/messages") => anthropic::answer(&script, &body, streaming),
        (Method::POST, "/v1/responses") => responses::answer(&script, &body, streaming),
        (Method::POST, p) if p.starts_with("/v1beta/models/") => {
            let sse = uri.query().is_some_and(|q| q.contains("alt=sse"));
            gemini::answer(&script, p, &body, sse)
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn event_stream(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Anthropic's Messages API, as Claude Code calls it.
mod anthropic {
    use super::*;

    pub fn answer(script: &Script, body: &Value, streaming: bool) -> Response {
        let (content, stop_reason) = reply(script, body);
        let message = json!({
            "id": format!("msg_{}", next_id()),
            "type": "message",
            "role": "assistant",
            "model": body["model"].as_str().unwrap_or("stand-in"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": { "input_tokens": 100, "output_tokens": 20 },
        });
        if streaming {
            event_stream(sse(&message))
        } else {
            Json(message).into_response()
        }
    }

    /// The agent's own turn (it offers the Read tool) gets a `tool_use`
    /// until a tool result comes back, then the final text. Side requests
    /// (titles, summaries: no tools) get the final text at once. The tool
    /// result need not be the last message: a hook's `additionalContext`
    /// (Cairn's file memories at PreToolUse) may follow it.
    fn reply(script: &Script, body: &Value) -> (Value, &'static str) {
        let offers_read = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Read"));
        let after_tool = body["messages"].as_array().is_some_and(|messages| {
            messages
                .iter()
                .rev()
                .take_while(|m| m["role"] != "assistant")
                .filter_map(|m| m["content"].as_array())
                .any(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
        });
        if offers_read && !after_tool {
            (
                json!([{ "type": "tool_use", "id": format!("toolu_{}", next_id()),
                         "name": "Read", "input": { "file_path": script.read_path } }]),
                "tool_use",
            )
        } else {
            (json!([{ "type": "text", "text": script.final_text }]), "end_turn")
        }
    }

    /// The whole message as Messages-API server-sent events, in one body
    /// (the client parses events, not timing).
    fn sse(message: &Value) -> String {
        let mut out = String::new();
        let mut event = |name: &str, data: Value| {
            out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        };
        let mut start = message.clone();
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        event(
            "message_start",
            json!({ "type": "message_start", "message": start }),
        );
        for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
            let (opening, delta) = if block["type"] == "tool_use" {
                (
                    json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                    json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }),
                )
            } else {
                (
                    json!({ "type": "text", "text": "" }),
                    json!({ "type": "text_delta", "text": block["text"] }),
                )
            };
            event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": index, "content_block": opening }),
            );
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": index, "delta": delta }),
            );
            event(
                "content_block_stop",
                json!({ "type": "content_block_stop", "index": index }),
            );
        }
        event(
            "message_delta",
            json!({ "type": "message_delta",
                    "delta": { "stop_reason": message["stop_reason"], "stop_sequence": null },
                    "usage": { "output_tokens": 20 } }),
        );
        event("message_stop", json!({ "type": "message_stop" }));
        out
    }
}

/// OpenAI's Responses API, as Codex calls it (a custom model provider with
/// `wire_api = "responses"`).
mod responses {
    use super::*;

    pub fn answer(script: &Script, body: &Value, streaming: bool) -> Response {
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        let after_tool = body["input"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["type"] == "function_call_output"));
        let command = format!("cat '{}'", script.read_path);
        // Codex's shell tool has been `shell` (argv) and is `exec_command`
        // (a command line) in current versions.
        let call = if tools.contains(&"exec_command") {
            Some(("exec_command", json!({ "cmd": command })))
        } else if tools.contains(&"shell") {
            Some(("shell", json!({ "command": ["sh", "-c", command] })))
        } else {
            None
        };
        let item = match call {
            Some((name, arguments)) if !after_tool => json!({
                "type": "function_call", "id": format!("fc_{}", next_id()),
                "call_id": format!("call_{}", next_id()), "name": name,
                "arguments": arguments.to_string(), "status": "completed",
            }),
            _ => json!({
                "type": "message", "id": format!("msg_{}", next_id()), "role": "assistant",
                "status": "completed",
                "content": [{ "type": "output_text", "text": script.final_text, "annotations": [] }],
            }),
        };
        let response = json!({
            "id": format!("resp_{}", next_id()), "object": "response", "status": "completed",
            "model": body["model"], "output": [item],
            "usage": { "input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                       "input_tokens_details": { "cached_tokens": 0 },
                       "output_tokens_details": { "reasoning_tokens": 0 } },
        });
        if !streaming {
            return Json(response).into_response();
        }
        let mut created = response.clone();
        created["status"] = json!("in_progress");
        created["output"] = json!([]);
        let events = [
            json!({ "type": "response.created", "response": created }),
            json!({ "type": "response.output_item.added", "output_index": 0, "item": item }),
            json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
            json!({ "type": "response.completed", "response": response }),
        ];
        event_stream(
            events
                .iter()
                .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
                .collect(),
        )
    }
}

/// The Gemini API (`/v1beta/models/{model}:generateContent`,
/// `:streamGenerateContent?alt=sse`, `:countTokens`), as Gemini CLI calls it
/// with `GOOGLE_GEMINI_BASE_URL`.
mod gemini {
    use super::*;

    pub fn answer(script: &Script, path: &str, body: &Value, sse: bool) -> Response {
        if path.ends_with(":countTokens") {
            return Json(json!({ "totalTokens": 1000 })).into_response();
        }
        let offers_read = body["tools"].as_array().is_some_and(|tools| {
            tools.iter().any(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["name"] == "read_file"))
            })
        });
        let after_tool = body["contents"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|c| c["parts"].as_array())
            .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()));
        let config = &body["generationConfig"];
        let schema = config
            .get("responseJsonSchema")
            .or_else(|| config.get("responseSchema"));
        let part = if let Some(schema) = schema {
            // Side requests (the model router's complexity score, the
            // next-speaker check) want JSON of a given shape.
            json!({ "text": fill(schema).to_string() })
        } else if offers_read && !after_tool {
            json!({ "functionCall": { "name": "read_file",
                                      "args": { "file_path": script.read_path } } })
        } else {
            json!({ "text": script.final_text })
        };
        let answer = json!({
            "candidates": [{ "content": { "role": "model", "parts": [part] },
                             "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 100, "candidatesTokenCount": 20,
                               "totalTokenCount": 120 },
            "modelVersion": "stand-in",
        });
        if sse {
            event_stream(format!("data: {answer}\r\n\r\n"))
        } else {
            Json(answer).into_response()
        }
    }

    /// Some value of the schema's shape: the last enum value (the
    /// next-speaker check's is `user`: the turn ends), 5 for numbers.
    fn fill(schema: &Value) -> Value {
        if let Some(last) = schema["enum"].as_array().and_then(|e| e.last()) {
            return last.clone();
        }
        match schema["type"]
            .as_str()
            .unwrap_or("string")
            .to_ascii_lowercase()
            .as_str()
        {
            "object" => Value::Object(
                schema["properties"]
                    .as_object()
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), fill(v))).collect())
                    .unwrap_or_default(),
            ),
            "array" => json!([]),
            "integer" | "number" => json!(5),
            "boolean" => json!(false),
            _ => json!("user"),
        }
    }
}
