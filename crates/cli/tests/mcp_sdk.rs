//! `cairn mcp` (stdio) and the API's `/v1/mcp` (streamable HTTP) against the
//! official Python MCP SDK (`mcp`, pinned and installed by
//! scripts/tools/openapi-tools.sh), in both protocol eras: a client of the
//! `initialize` handshake (2025-11-25) and one of 2026-07-28 (`server/discover`,
//! every result carrying `resultType`). The SDK parses every answer itself, so
//! an answer in the wrong revision fails the test (the bridge used to pass on
//! the upstream 2025-era tool result, without `resultType`, to 2026 clients).

use std::path::PathBuf;

use cairn_testkit::{TestApp, spawn_app};
use serde_json::{Value, json};

fn python() -> PathBuf {
    let home = std::env::var("HOME").expect("HOME");
    let python = PathBuf::from(home).join(".cache/cairn-tools/openapi/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/tools/openapi-tools.sh (it installs the Python MCP SDK)",
        python.display()
    );
    python
}

async fn drive(app: &TestApp, token: &str, era: &str, transport: &str, query: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_sdk/client.py");
    let out = tokio::process::Command::new(python())
        .args([script, era, transport, query])
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_URL", &app.base)
        .env("CAIRN_TOKEN", token)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), out)
        .await
        .expect("the SDK client finished within 60 s")
        .expect("run the SDK client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{era} client over {transport} failed: {stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

#[tokio::test]
async fn old_and_newest_sdk_clients_are_each_answered_in_their_revision() {
    let app = spawn_app().await;
    let body = json!({"projectId": app.project_id, "kind": "decision",
        "content": "Revision negotiation keeps both eras of clients"});
    let (status, res) = app.post("/v1/memories", Some(&app.ingest_token), &body).await;
    assert_eq!(status, 201, "{res}");
    let id = res["memory"]["id"].as_str().unwrap().to_string();
    let token = app
        .mint(json!({"name": "sdk reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;

    for (era, revision, transport) in [
        ("legacy", "2025-11-25", "stdio"),
        ("modern", "2026-07-28", "stdio"),
        ("legacy", "2025-11-25", "http"),
        ("modern", "2026-07-28", "http"),
    ] {
        let out = drive(&app, &token, era, transport, "revision negotiation").await;
        assert_eq!(out["protocolVersion"], revision, "{out}");
        assert_eq!(
            out["tools"],
            json!([
                "ask",
                "context",
                "feedback",
                "get_observations",
                "search",
                "share",
                "timeline"
            ]),
            "{out}"
        );
        assert_eq!(out["search"]["isError"], false, "{out}");
        let found = out["search"]["text"].as_str().unwrap();
        assert!(found.contains(&format!("- {id} ")), "{era} {transport}: {found}");
        // `ask` answers offline with the best memory itself, cited by id.
        assert_eq!(out["ask"]["isError"], false, "{out}");
        let asked = out["ask"]["text"].as_str().unwrap();
        assert!(asked.contains(&format!("[{id}]")), "{era} {transport}: {asked}");
        // A tool's own error stays a tool error in both revisions.
        assert_eq!(out["timeline"]["isError"], true, "{out}");
        assert!(
            out["timeline"]["text"].as_str().unwrap().contains("anchor"),
            "{out}"
        );
    }
}
