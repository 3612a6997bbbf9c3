//! A stand-in for Anthropic's Messages API on 127.0.0.1: it records every
//! request and plays a fixed script — a `tool_use` (Read a given file) for an
//! agent's turn, then a final text once the tool result comes back.

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
    /// hook context (system blocks, message text) does not matter to the test.
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
    /// The file the scripted `tool_use` asks the agent to read.
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
    let body_json: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    script.log.lock().unwrap().push(Recorded {
        method: method.to_string(),
        path: uri.to_string(),
        body: body_json.clone(),
    });
    let path = uri.path();
    if method != Method::POST {
        return StatusCode::NOT_FOUND.into_response();
    }
    if path == "/v1/messages/count_tokens" {
        return Json(json!({ "input_tokens": 1000 })).into_response();
    }
    if path != "/v1/messages" {
        return StatusCode::NOT_FOUND.into_response();
    }
    let (content, stop_reason) = reply(&script, &body_json);
    let message = json!({
        "id": format!("msg_{}", next_id()),
        "type": "message",
        "role": "assistant",
        "model": body_json["model"].as_str().unwrap_or("stand-in"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": { "input_tokens": 100, "output_tokens": 20 },
    });
    if body_json["stream"].as_bool() == Some(true) {
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            sse(&message),
        )
            .into_response()
    } else {
        Json(message).into_response()
    }
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The agent's own turn (it offers the Read tool) gets a `tool_use` until a
/// tool result comes back, then the final text. Side requests (titles,
/// summaries: no tools) get the final text at once.
fn reply(script: &Script, body: &Value) -> (Value, &'static str) {
    let offers_read = body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Read"));
    let after_tool = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    if offers_read && !after_tool {
        let id = format!("toolu_{}", next_id());
        (
            json!([{ "type": "tool_use", "id": id, "name": "Read",
                     "input": { "file_path": script.read_path } }]),
            "tool_use",
        )
    } else {
        (json!([{ "type": "text", "text": script.final_text }]), "end_turn")
    }
}

/// The whole message as Messages-API server-sent events; sent in one body
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
