//! Malformed, oversized, unauthenticated and misrouted requests: each answers a precise 4xx with a
//! stable error code and the request id, none answers 5xx, and nothing of them is stored.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

/// Which credential a row sends.
#[derive(Clone)]
enum Cred {
    None,
    /// The default project's token (`ingest`, `read`).
    Ingest,
    /// The bootstrap team token (`superadmin`, `admin`, `read`, `ingest`).
    Admin,
    /// A raw `Authorization` header value.
    Header(String),
}

struct Row {
    name: &'static str,
    method: Method,
    path: String,
    cred: Cred,
    body: Option<Vec<u8>>,
    content_type: Option<&'static str>,
    status: u16,
    code: &'static str,
}

const JSON: Option<&str> = Some("application/json");

fn row(
    name: &'static str,
    method: Method,
    path: impl Into<String>,
    cred: Cred,
    body: Option<Vec<u8>>,
    content_type: Option<&'static str>,
    (status, code): (u16, &'static str),
) -> Row {
    Row {
        name,
        method,
        path: path.into(),
        cred,
        body,
        content_type,
        status,
        code,
    }
}

fn bytes(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn json_bytes(v: Value) -> Option<Vec<u8>> {
    Some(serde_json::to_vec(&v).unwrap())
}

/// A hook body with the given fields on top of a valid `Stop`.
fn hook(extra: Value) -> Option<Vec<u8>> {
    let mut body = json!({"session_id": "s-malformed", "hook_event_name": "Stop", "cwd": "/r"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap());
    json_bytes(body)
}

/// A valid `/v1/events` body with the given fields replaced (`null` removes one).
fn event(changes: Value) -> Value {
    let mut body = json!({"projectId": "default", "sourceType": "hook", "eventType": "tool_use",
                          "occurredAtEpoch": 1_700_000_000_000_i64, "contentSessionId": "s-malformed",
                          "payload": {"tool_name": "Bash"}});
    let obj = body.as_object_mut().unwrap();
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            obj.remove(k);
        } else {
            obj.insert(k.clone(), v.clone());
        }
    }
    body
}

/// The table. Kept one row per line (hence no rustfmt) so it reads as the error catalogue it is.
#[rustfmt::skip]
fn rows(app: &TestApp) -> Vec<Row> {
    use Cred::{Admin, Ingest};
    let (get, post, put, delete) = (Method::GET, Method::POST, Method::PUT, Method::DELETE);
    let hooks = "/v1/hooks/claude-code";
    let random = Uuid::new_v4();
    let big = "x".repeat(300 * 1024);
    // The ingest token with the first character of its signature changed.
    let (signed, signature) = app.ingest_token.rsplit_once('.').unwrap();
    let first = if signature.starts_with('A') { 'B' } else { 'A' };
    let tampered = format!("{signed}.{first}{}", &signature[1..]);
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let deep = format!(r#"{{"session_id":"s","hook_event_name":"Stop","x":{}}}"#, nest(300));
    let deep_event = format!(
        r#"{{"projectId":"default","sourceType":"api","eventType":"e","occurredAtEpoch":1,"payload":{}}}"#,
        nest(300)
    );
    let batch_of = |n: usize| json_bytes(json!({"events": vec![event(json!({})); n]}));

    vec![
        // Claude Code hooks: the adapter parses the raw body itself.
        row("hook: invalid JSON", post.clone(), hooks, Ingest, bytes(r#"{"session_id":"#), JSON, (400, "invalid_json")),
        row("hook: empty body", post.clone(), hooks, Ingest, bytes(""), JSON, (400, "invalid_json")),
        row("hook: body is an array", post.clone(), hooks, Ingest, bytes("[1,2]"), JSON, (422, "invalid_body")),
        row("hook: body is a string", post.clone(), hooks, Ingest, bytes(r#""Stop""#), JSON, (422, "invalid_body")),
        row("hook: no session_id", post.clone(), hooks, Ingest, bytes(r#"{"hook_event_name":"Stop"}"#), JSON, (422, "missing_field")),
        row("hook: session_id is a number", post.clone(), hooks, Ingest, hook(json!({"session_id": 42})), JSON, (422, "invalid_field")),
        row("hook: session_id is empty", post.clone(), hooks, Ingest, hook(json!({"session_id": "  "})), JSON, (422, "invalid_field")),
        row("hook: session_id over 256 chars", post.clone(), hooks, Ingest, hook(json!({"session_id": "s".repeat(257)})), JSON, (422, "invalid_field")),
        row("hook: no hook_event_name", post.clone(), hooks, Ingest, bytes(r#"{"session_id":"s"}"#), JSON, (422, "missing_field")),
        row("hook: hook_event_name is null", post.clone(), hooks, Ingest, hook(json!({"hook_event_name": null})), JSON, (422, "invalid_field")),
        row("hook: PostToolUse without tool_name", post.clone(), hooks, Ingest, hook(json!({"hook_event_name": "PostToolUse"})), JSON, (422, "missing_field")),
        row("hook: PreToolUse with a numeric tool_name", post.clone(), hooks, Ingest, hook(json!({"hook_event_name": "PreToolUse", "tool_name": 7})), JSON, (422, "invalid_field")),
        row("hook: UserPromptSubmit without prompt", post.clone(), hooks, Ingest, hook(json!({"hook_event_name": "UserPromptSubmit"})), JSON, (422, "missing_field")),
        row("hook: cwd is an object", post.clone(), hooks, Ingest, hook(json!({"cwd": {}})), JSON, (422, "invalid_field")),
        row("hook: tool_use_id is a number", post.clone(), hooks, Ingest, hook(json!({"tool_use_id": 1})), JSON, (422, "invalid_field")),
        row("hook: unknown agent", post.clone(), "/v1/hooks/vim", Ingest, hook(json!({})), JSON, (404, "unknown_agent")),
        row("hook: team token, no project, no rule for its directory", post.clone(), hooks, Admin, hook(json!({})), JSON, (404, "project_unresolved")),
        row("hook: unknown ?project", post.clone(), format!("{hooks}?project=nope"), Admin, hook(json!({})), JSON, (404, "project_not_found")),
        row("hook: nested deeper than the JSON parser allows", post.clone(), hooks, Ingest, bytes(&deep), JSON, (400, "invalid_json")),
        row("hook: over CAIRN_MAX_BODY_BYTES", post.clone(), hooks, Ingest, hook(json!({"pad": big})), JSON, (413, "payload_too_large")),
        // POST /v1/events.
        row("event: invalid JSON", post.clone(), "/v1/events", Ingest, bytes(r#"{"projectId": "#), JSON, (400, "invalid_json")),
        row("event: occurredAtEpoch is a string", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"occurredAtEpoch": "yesterday"}))), JSON, (422, "invalid_body")),
        row("event: occurredAtEpoch is fractional", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"occurredAtEpoch": 1.5}))), JSON, (422, "invalid_body")),
        row("event: no projectId", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"projectId": null}))), JSON, (422, "invalid_body")),
        row("event: no eventType", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"eventType": null}))), JSON, (422, "invalid_body")),
        row("event: no sourceType", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"sourceType": null}))), JSON, (422, "invalid_body")),
        row("event: unknown sourceType", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"sourceType": "carrier-pigeon"}))), JSON, (422, "invalid_body")),
        row("event: serverSessionId not a uuid", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"serverSessionId": "nope"}))), JSON, (422, "invalid_body")),
        row("event: body is an array", post.clone(), "/v1/events", Ingest, bytes("[]"), JSON, (422, "invalid_body")),
        row("event: occurredAtEpoch out of range", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"occurredAtEpoch": i64::MAX}))), JSON, (422, "invalid_field")),
        row("event: occurredAtEpoch far negative", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"occurredAtEpoch": i64::MIN}))), JSON, (422, "invalid_field")),
        row("event: empty eventType", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"eventType": " "}))), JSON, (422, "invalid_field")),
        row("event: eventType over 100 chars", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"eventType": "e".repeat(101)}))), JSON, (422, "invalid_field")),
        row("event: empty contentSessionId", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"contentSessionId": ""}))), JSON, (422, "invalid_field")),
        row("event: unknown serverSessionId", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"serverSessionId": random}))), JSON, (404, "session_not_found")),
        row("event: unknown project slug", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"projectId": "nope"}))), JSON, (404, "project_not_found")),
        row("event: ?generate is not a bool", post.clone(), "/v1/events?generate=maybe", Ingest, json_bytes(event(json!({}))), JSON, (400, "invalid_query")),
        row("event: no content-type", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({}))), None, (415, "unsupported_media_type")),
        row("event: text/plain", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({}))), Some("text/plain"), (415, "unsupported_media_type")),
        row("event: payload nested too deep", post.clone(), "/v1/events", Ingest, bytes(&deep_event), JSON, (400, "invalid_json")),
        row("event: over CAIRN_MAX_BODY_BYTES", post.clone(), "/v1/events", Ingest, json_bytes(event(json!({"payload": {"pad": big}}))), JSON, (413, "payload_too_large")),
        // POST /v1/events/batch.
        row("batch: no events", post.clone(), "/v1/events/batch", Ingest, batch_of(0), JSON, (422, "invalid_batch")),
        row("batch: 501 events", post.clone(), "/v1/events/batch", Ingest, batch_of(501), JSON, (422, "invalid_batch")),
        row("batch: no `events` field", post.clone(), "/v1/events/batch", Ingest, bytes("{}"), JSON, (422, "invalid_body")),
        row(
            "batch: one bad event among good ones",
            post.clone(),
            "/v1/events/batch",
            Ingest,
            json_bytes(json!({"events": [event(json!({})), event(json!({"occurredAtEpoch": i64::MAX}))]})),
            JSON,
            (422, "invalid_field"),
        ),
        // Sessions.
        row("session start: unknown project slug", post.clone(), "/v1/sessions/start", Ingest, json_bytes(json!({"projectId": "no-such-project"})), JSON, (404, "project_not_found")),
        row("session start: unknown project id", post.clone(), "/v1/sessions/start", Admin, json_bytes(json!({"projectId": random})), JSON, (404, "project_not_found")),
        row("session start: no projectId", post.clone(), "/v1/sessions/start", Ingest, bytes("{}"), JSON, (422, "invalid_body")),
        row("session start: id over 256 chars", post.clone(), "/v1/sessions/start", Ingest, json_bytes(json!({"projectId": "default", "externalSessionId": "s".repeat(257)})), JSON, (422, "invalid_field")),
        row("session: id not a uuid", get.clone(), "/v1/sessions/not-a-uuid", Ingest, None, None, (400, "invalid_path")),
        row("session: id is not UTF-8", get.clone(), "/v1/sessions/%FF", Ingest, None, None, (400, "invalid_path")),
        row("session end: id not a uuid", post.clone(), "/v1/sessions/not-a-uuid/end", Ingest, bytes("{}"), JSON, (400, "invalid_path")),
        row("session: unknown id", get.clone(), format!("/v1/sessions/{random}"), Ingest, None, None, (404, "session_not_found")),
        row("event: id not a uuid", get.clone(), "/v1/events/42", Ingest, None, None, (400, "invalid_path")),
        row("event: unknown id", get.clone(), format!("/v1/events/{random}/observations"), Ingest, None, None, (404, "event_not_found")),
        // Jobs.
        row("jobs: limit over 200", get.clone(), "/v1/jobs?limit=1000", Ingest, None, None, (400, "invalid_limit")),
        row("jobs: limit 0", get.clone(), "/v1/jobs?limit=0", Ingest, None, None, (400, "invalid_limit")),
        row("jobs: limit not a number", get.clone(), "/v1/jobs?limit=ten", Ingest, None, None, (400, "invalid_query")),
        row("jobs: unknown status", get.clone(), "/v1/jobs?status=bogus", Ingest, None, None, (400, "invalid_status")),
        row("jobs: negative offset", get.clone(), "/v1/jobs?offset=-1", Ingest, None, None, (400, "invalid_offset")),
        row("jobs: since out of range", get.clone(), format!("/v1/jobs?since={}", i64::MAX), Ingest, None, None, (400, "invalid_since")),
        row("jobs: unknown id", get.clone(), format!("/v1/jobs/{random}"), Ingest, None, None, (404, "job_not_found")),
        row("jobs: retry needs admin", post.clone(), format!("/v1/jobs/{random}/retry"), Ingest, bytes("{}"), JSON, (403, "insufficient_scope")),
        row("jobs: cancel an unknown id", post.clone(), format!("/v1/jobs/{random}/cancel"), Admin, bytes("{}"), JSON, (404, "job_not_found")),
        // Memories.
        row("memory: empty content", post.clone(), "/v1/memories", Ingest, json_bytes(json!({"projectId": "default", "content": "  "})), JSON, (422, "empty_content")),
        row("memory: kind over 64 chars", post.clone(), "/v1/memories", Ingest, json_bytes(json!({"projectId": "default", "content": "c", "kind": "k".repeat(65)})), JSON, (422, "invalid_field")),
        row("memory: no content", post.clone(), "/v1/memories", Ingest, json_bytes(json!({"projectId": "default"})), JSON, (422, "invalid_body")),
        row("memory: unknown id", delete.clone(), format!("/v1/memories/{random}"), Ingest, None, None, (404, "memory_not_found")),
        // Routing.
        row("unknown route", get.clone(), "/v1/nope", Ingest, None, None, (404, "route_not_found")),
        row("unknown route, no token", get.clone(), "/v2/events", Cred::None, None, None, (404, "route_not_found")),
        row("wrong method: GET /v1/events", get.clone(), "/v1/events", Ingest, None, None, (405, "method_not_allowed")),
        row("wrong method: PUT /v1/jobs", put, "/v1/jobs", Ingest, bytes("{}"), JSON, (405, "method_not_allowed")),
        row("wrong method: DELETE /v1/sessions/start", delete, "/v1/sessions/start", Ingest, None, None, (405, "method_not_allowed")),
        // Credentials.
        row("no token", get.clone(), "/v1/jobs", Cred::None, None, None, (401, "missing_credentials")),
        row("no token on a hook", post.clone(), hooks, Cred::None, hook(json!({})), JSON, (401, "missing_credentials")),
        row("garbage bearer token", get.clone(), "/v1/jobs", Cred::Header("Bearer garbage".into()), None, None, (403, "invalid_token")),
        row("empty bearer token", get.clone(), "/v1/jobs", Cred::Header("Bearer ".into()), None, None, (403, "invalid_token")),
        row("Basic credentials", get.clone(), "/v1/jobs", Cred::Header("Basic xyz".into()), None, None, (403, "invalid_token")),
        row("a token with an altered signature", get, "/v1/jobs", Cred::Header(format!("Bearer {tampered}")), None, None, (403, "invalid_token")),
        row("garbage token on a hook", post, hooks, Cred::Header("Bearer x.y.z".into()), hook(json!({})), JSON, (403, "invalid_token")),
    ]
}

async fn send(app: &TestApp, row: &Row) -> Result<(u16, Option<String>, Value), String> {
    let mut req = app
        .client
        .request(row.method.clone(), format!("{}{}", app.base, row.path));
    req = match &row.cred {
        Cred::None => req,
        Cred::Ingest => req.bearer_auth(&app.ingest_token),
        Cred::Admin => req.bearer_auth(&app.admin_token),
        Cred::Header(h) => req.header("authorization", h),
    };
    if let Some(ct) = row.content_type {
        req = req.header("content-type", ct);
    }
    if let Some(body) = &row.body {
        req = req.body(body.clone());
    }
    let res = req.send().await.map_err(|e| format!("request failed: {e}"))?;
    let status = res.status().as_u16();
    let header = res
        .headers()
        .get("x-request-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.map_err(|e| format!("body failed: {e}"))?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, header, body))
}

#[tokio::test]
async fn every_malformed_request_answers_its_documented_4xx_code_and_stores_nothing() {
    let app = spawn_app().await;
    let rows = rows(&app);
    let mut failures = vec![];
    for row in &rows {
        let (status, header, body) = match send(&app, row).await {
            Ok(answer) => answer,
            Err(e) => {
                failures.push(format!("{}: {e}", row.name));
                continue;
            }
        };
        let code = body["error"]["code"].as_str().unwrap_or("<none>");
        let request_id = body["error"]["requestId"].as_str().unwrap_or("");
        if status >= 500 {
            failures.push(format!("{}: answered {status} (server error): {body}", row.name));
        } else if (status, code) != (row.status, row.code) {
            failures.push(format!(
                "{}: expected {} {}, got {status} {code}: {body}",
                row.name, row.status, row.code
            ));
        } else if request_id.is_empty() {
            failures.push(format!("{}: no error.requestId: {body}", row.name));
        } else if header.as_deref() != Some(request_id) {
            failures.push(format!(
                "{}: X-Request-Id {header:?} differs from error.requestId {request_id}",
                row.name
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );

    for table in [
        "agent_events",
        "sessions",
        "generation_jobs",
        "observations",
        "audit_log WHERE action <> 'bootstrap'",
    ] {
        assert_eq!(
            app.count(&format!("SELECT count(*) FROM {table}")).await,
            0,
            "nothing malformed was stored in {table}"
        );
    }
    // The server still takes a well-formed request after all that.
    let (status, res) = app
        .post("/v1/events", Some(&app.ingest_token), &event(json!({})))
        .await;
    assert_eq!(status, 201, "{res}");
    // The hook adapter reads the raw body whatever its content type says.
    let (status, res) = app
        .post_raw(
            "/v1/hooks/claude-code",
            Some(&app.ingest_token),
            hook(json!({})).unwrap(),
            "text/plain",
        )
        .await;
    assert_eq!((status, res), (200, json!({})));
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 2);
}

async fn get_with_request_id(app: &TestApp, path: &str, id: Option<&str>) -> (u16, String, Value) {
    let mut req = app
        .client
        .get(format!("{}{path}", app.base))
        .bearer_auth(&app.ingest_token);
    if let Some(id) = id {
        req = req.header("x-request-id", id);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let header = res.headers()["x-request-id"].to_str().unwrap().to_string();
    let body = res.json().await.unwrap_or(Value::Null);
    (status, header, body)
}

fn is_generated_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test]
async fn a_well_formed_client_request_id_is_echoed_and_an_invalid_one_is_replaced() {
    let app = spawn_app().await;

    let (status, header, body) = get_with_request_id(&app, "/v1/sessions/not-a-uuid", Some("abc-123")).await;
    assert_eq!(status, 400);
    assert_eq!(header, "abc-123");
    assert_eq!(body["error"]["requestId"], "abc-123");

    // On a success too (no error body, only the header).
    let (status, header, _) = get_with_request_id(&app, "/v1/jobs", Some("Trace_42")).await;
    assert_eq!((status, header.as_str()), (200, "Trace_42"));

    let too_long = "a".repeat(65);
    for invalid in ["bad id!", "-leading-dash", too_long.as_str()] {
        let (status, header, body) =
            get_with_request_id(&app, "/v1/sessions/not-a-uuid", Some(invalid)).await;
        assert_eq!(status, 400);
        assert_ne!(header, invalid);
        assert!(
            is_generated_id(&header),
            "{invalid:?} replaced by a generated id, got {header}"
        );
        assert_eq!(body["error"]["requestId"], header.as_str());
    }

    // Without one, each request gets its own.
    let (_, first, _) = get_with_request_id(&app, "/v1/sessions/not-a-uuid", None).await;
    let (_, second, _) = get_with_request_id(&app, "/v1/sessions/not-a-uuid", None).await;
    assert!(is_generated_id(&first) && is_generated_id(&second));
    assert_ne!(first, second);
}

#[tokio::test]
async fn a_nul_character_in_any_stored_string_is_refused_or_stored_never_a_server_error() {
    let app = spawn_app().await;
    let nul = "a\u{0}b";
    let requests: Vec<(&str, &str, Value)> = vec![
        (
            "hook prompt",
            "/v1/hooks/claude-code",
            cc("s1", "UserPromptSubmit", json!({"prompt": nul})),
        ),
        (
            "hook session_id",
            "/v1/hooks/claude-code",
            cc(nul, "Stop", json!({})),
        ),
        (
            "hook cwd",
            "/v1/hooks/claude-code",
            cc("s3", "Stop", json!({"cwd": nul})),
        ),
        (
            "hook tool_input",
            "/v1/hooks/claude-code",
            cc(
                "s4",
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_use_id": "t", "tool_input": {"c": nul}}),
            ),
        ),
        ("event eventType", "/v1/events", event(json!({"eventType": nul}))),
        (
            "event payload",
            "/v1/events",
            event(json!({"payload": {"x": nul}})),
        ),
        (
            "event contentSessionId",
            "/v1/events",
            event(json!({"contentSessionId": nul})),
        ),
        (
            "session externalSessionId",
            "/v1/sessions/start",
            json!({"projectId": "default", "externalSessionId": nul}),
        ),
        (
            "memory content",
            "/v1/memories",
            json!({"projectId": "default", "content": nul}),
        ),
    ];
    let mut server_errors = vec![];
    for (name, path, body) in requests {
        let (status, res) = app.post(path, Some(&app.ingest_token), &body).await;
        if status >= 500 {
            server_errors.push(format!("{name}: {status} {res}"));
        }
    }
    assert!(
        server_errors.is_empty(),
        "a NUL character is client input: store it (escaped or stripped) or answer 4xx, not 5xx:\n{}",
        server_errors.join("\n")
    );
}
