//! The remote MCP endpoint `/v1/mcp`: an rmcp client over streamable HTTP
//! lists the tools and calls each; auth is the API's (401, 403), project
//! tokens stay in their project, bad arguments come back as tool errors, and
//! any request stands alone (no session), so any replica answers it.

use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult, ClientConfig},
    service::RunningService,
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(app: &TestApp, token: &str) -> Client {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/v1/mcp", app.base)).auth_header(token);
    ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP initialize")
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = args.as_object().cloned();
    client.call_tool(params).await.expect("tools/call")
}

/// The text of a result, and whether it is a tool error.
fn text(result: &CallToolResult) -> (String, bool) {
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error == Some(true))
}

/// A manual memory in the bootstrap project; returns its id.
async fn remember(app: &TestApp, token: &str, project: &str, kind: &str, content: &str) -> String {
    let body = json!({"projectId": project, "kind": kind, "content": content});
    let (status, res) = app.post("/v1/memories", Some(token), &body).await;
    assert_eq!(status, 201, "{res}");
    res["memory"]["id"].as_str().unwrap().to_string()
}

async fn reader(app: &TestApp) -> String {
    app.mint(json!({"name": "mcp reader", "scopes": ["read"], "projectId": app.project_id}))
        .await
}

#[tokio::test]
async fn lists_the_tools_and_calls_each() {
    let app = spawn_app().await;
    let project = app.project_id.to_string();
    let ingest = app.ingest_token.clone();
    let first = remember(
        &app,
        &ingest,
        &project,
        "decision",
        "Chose Postgres advisory locks for job claims\nThey survive restarts.",
    )
    .await;
    let second = remember(
        &app,
        &ingest,
        &project,
        "bugfix",
        "Fixed the tokenizer panic on empty input",
    )
    .await;
    let third = remember(
        &app,
        &ingest,
        &project,
        "discovery",
        "The staging cache ignores TTLs",
    )
    .await;

    let client = connect(&app, &reader(&app).await).await;
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ask",
            "context",
            "feedback",
            "get_observations",
            "search",
            "share",
            "timeline"
        ]
    );

    let (found, error) = text(&call(&client, "search", json!({"query": "tokenizer panic"})).await);
    assert!(!error, "{found}");
    assert!(found.contains(&second), "{found}");
    assert!(
        found.contains("bugfix Fixed the tokenizer panic on empty input"),
        "{found}"
    );
    assert!(!found.contains(&third), "{found}");
    let (marked, error) = text(&call(&client, "feedback", json!({"id": second, "verdict": "helpful"})).await);
    assert!(!error && marked.contains("helpful 1"), "{marked}");
    let (refused, error) = text(&call(&client, "feedback", json!({"id": second, "verdict": "great"})).await);
    assert!(error && refused.contains("verdict"), "{refused}");
    // `share` needs a member's token (this one is a service token) or an admin's.
    let (answer, error) = text(&call(&client, "share", json!({"id": second})).await);
    assert!(error && answer.contains("member_required"), "{answer}");

    let (listed, error) = text(&call(&client, "search", json!({"orderBy": "newest", "limit": 2})).await);
    assert!(!error, "{listed}");
    assert!(
        listed.contains(&third) && listed.contains(&second) && !listed.contains(&first),
        "{listed}"
    );
    assert!(listed.contains("offset=2"), "{listed}");
    let (page, _) = text(
        &call(
            &client,
            "search",
            json!({"orderBy": "newest", "limit": 2, "offset": 2}),
        )
        .await,
    );
    assert!(page.contains(&first) && !page.contains(&second), "{page}");

    let (typed, _) = text(&call(&client, "search", json!({"type": "decision"})).await);
    assert!(typed.contains(&first) && !typed.contains(&second), "{typed}");

    let (full, error) = text(&call(&client, "get_observations", json!({"ids": [first, third]})).await);
    assert!(!error, "{full}");
    assert!(
        full.contains("## Chose Postgres advisory locks for job claims"),
        "{full}"
    );
    assert!(full.contains("They survive restarts."), "{full}");
    assert!(full.contains(&format!("id {first} · decision")), "{full}");
    assert!(full.contains("The staging cache ignores TTLs"), "{full}");

    let (around, error) = text(&call(&client, "timeline", json!({"anchor": second})).await);
    assert!(!error, "{around}");
    let lines: Vec<&str> = around.lines().skip(1).collect();
    assert_eq!(lines.len(), 3, "{around}");
    assert!(lines[0].contains(&first) && lines[2].contains(&third), "{around}");
    assert!(lines[1].starts_with(&format!("> {second}")), "{around}");
    let (by_query, error) = text(
        &call(
            &client,
            "timeline",
            json!({"query": "staging cache", "depth_before": 1, "depth_after": 0}),
        )
        .await,
    );
    assert!(!error, "{by_query}");
    assert!(
        by_query.contains(&format!("> {third}")) && !by_query.contains(&first),
        "{by_query}"
    );

    let (context, error) = text(&call(&client, "context", json!({"query": "advisory locks"})).await);
    assert!(!error, "{context}");
    assert!(context.contains("# Project memory"), "{context}");
    assert!(context.contains(&first), "{context}");

    // Offline, `ask` answers with the best memories themselves, cited by id.
    let (answer, error) = text(
        &call(
            &client,
            "ask",
            json!({"question": "what about the tokenizer panic?"}),
        )
        .await,
    );
    assert!(!error, "{answer}");
    assert!(
        answer.contains("Fixed the tokenizer panic on empty input") && answer.contains(&second),
        "{answer}"
    );
    let (refused, error) = text(&call(&client, "ask", json!({"question": ""})).await);
    assert!(error && refused.starts_with("invalid_field"), "{refused}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_and_unknown_projects_are_tool_errors() {
    let app = spawn_app().await;
    let client = connect(&app, &reader(&app).await).await;
    let cases = [
        ("get_observations", json!({"ids": ["not-an-id"]}), "invalid_field"),
        ("get_observations", json!({"ids": []}), "invalid_field"),
        ("get_observations", json!({}), "invalid_field"),
        ("timeline", json!({}), "anchor"),
        (
            "timeline",
            json!({"anchor": "x", "depth_before": 500}),
            "depth_before",
        ),
        ("search", json!({"limit": 0}), "limit"),
        ("search", json!({"orderBy": "sideways"}), "orderBy"),
        ("search", json!({"dateStart": "last tuesday"}), "dateStart"),
        ("search", json!({"query": 42}), "invalid_field"),
        (
            "search",
            json!({"project": "no-such-project"}),
            "project_not_found",
        ),
        ("context", json!({"limit": 51}), "limit"),
    ];
    for (tool, args, expected) in cases {
        let (message, error) = text(&call(&client, tool, args.clone()).await);
        assert!(error, "{tool} {args}: {message}");
        assert!(message.contains(expected), "{tool} {args}: {message}");
    }
    // An unknown tool is a protocol error.
    let err = client
        .call_tool(CallToolRequestParams::new("delete_everything"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("delete_everything"), "{err}");

    // A team token must name the project; by slug or id it then reads it.
    let team = connect(&app, &app.admin_token).await;
    let (message, error) = text(&call(&team, "search", json!({})).await);
    assert!(error && message.contains("project_required"), "{message}");
    let id = remember(
        &app,
        &app.ingest_token,
        &app.project_id.to_string(),
        "note",
        "Team tokens work",
    )
    .await;
    let (slug,): (String,) = sqlx::query_as("SELECT slug FROM projects WHERE id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    for project in [slug, app.project_id.to_string()] {
        let (found, error) =
            text(&call(&team, "get_observations", json!({"ids": id, "project": project})).await);
        assert!(!error && found.contains("Team tokens work"), "{found}");
    }
}

#[tokio::test]
async fn auth_is_the_apis_401_and_403() {
    let app = spawn_app().await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, res) = app.post("/v1/mcp", None, &init).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (401, Some("missing_credentials")),
        "{res}"
    );
    let (status, res) = app.post("/v1/mcp", Some("not-a-token"), &init).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("invalid_token")),
        "{res}"
    );
    let ingest_only = app
        .mint(json!({"name": "ingest only", "scopes": ["ingest"], "projectId": app.project_id}))
        .await;
    let (status, res) = app.post("/v1/mcp", Some(&ingest_only), &init).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("insufficient_scope")),
        "{res}"
    );
    let (status, res) = app.get("/v1/mcp", None).await;
    assert_eq!(status, 401, "{res}");

    // The rmcp client sees the refusal too.
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/v1/mcp", app.base))
        .auth_header(ingest_only);
    let refused = ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await;
    assert!(refused.is_err());
}

#[tokio::test]
async fn a_project_token_cannot_read_another_project() {
    let app = spawn_app().await;
    let (status, other) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "other"}),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let other_id = other["project"]["id"].as_str().unwrap().to_string();
    let secret = remember(
        &app,
        &app.admin_token,
        &other_id,
        "decision",
        "Other project's secret plan",
    )
    .await;

    let client = connect(&app, &reader(&app).await).await;
    for project in ["other", other_id.as_str()] {
        for (tool, args) in [
            ("search", json!({"query": "secret plan", "project": project})),
            ("get_observations", json!({"ids": [secret], "project": project})),
            ("timeline", json!({"anchor": secret, "project": project})),
            ("context", json!({"project": project})),
        ] {
            let (message, error) = text(&call(&client, tool, args).await);
            assert!(
                error && message.contains("project_not_found"),
                "{tool} {project}: {message}"
            );
        }
    }
    // In its own project, the other project's ids do not exist.
    let (found, error) = text(&call(&client, "get_observations", json!({"ids": [secret]})).await);
    assert!(
        !error && found.contains("Not found") && !found.contains("secret plan"),
        "{found}"
    );
    let (found, _) = text(&call(&client, "search", json!({"query": "secret plan"})).await);
    assert!(!found.contains(&secret), "{found}");
}

/// A JSON-RPC POST as a streamable HTTP client sends it; the JSON answer.
async fn rpc(app: &TestApp, token: &str, body: Value) -> Value {
    let res = app
        .client
        .post(format!("{}/v1/mcp", app.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers().get("mcp-session-id").is_none(),
        "no session is minted"
    );
    res.json().await.unwrap()
}

#[tokio::test]
async fn each_request_stands_alone_on_any_replica() {
    let app = spawn_app().await;
    let replica = app.restart().await;
    let token = reader(&app).await;
    let id = remember(
        &app,
        &app.ingest_token,
        &app.project_id.to_string(),
        "note",
        "Stateless works",
    )
    .await;
    // Claude Code's sequence, each request on a different replica, no session id.
    let init = rpc(
        &app,
        &token,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "cairn", "{init}");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
    let tools = rpc(
        &replica,
        &token,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(
        tools["result"]["tools"].as_array().map(Vec::len),
        Some(7),
        "{tools}"
    );
    let called = rpc(
        &app,
        &token,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "get_observations", "arguments": {"ids": [id]}}}),
    )
    .await;
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Stateless works"), "{called}");
}
