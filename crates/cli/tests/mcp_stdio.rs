//! `cairn mcp` over stdio: the binary, started as an agent starts an MCP
//! server, bridges to a real cairn-api's `/v1/mcp` and serves its tools.

use cairn_testkit::{TestApp, spawn_app};
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult, ClientConfig},
    service::RunningService,
    transport::TokioChildProcess,
};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ClientConfig>;

async fn bridge(url: &str, token: &str) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("mcp").env("CAIRN_URL", url).env("CAIRN_TOKEN", token);
    let transport = TokioChildProcess::new(command).expect("spawn cairn mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize over stdio")
}

async fn call(client: &Client, tool: &str, args: Value) -> (String, bool) {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = args.as_object().cloned();
    let result: CallToolResult = client.call_tool(params).await.expect("tools/call");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error == Some(true))
}

async fn reader(app: &TestApp) -> String {
    app.mint(json!({"name": "stdio reader", "scopes": ["read"], "projectId": app.project_id}))
        .await
}

#[tokio::test]
async fn serves_the_remote_tools_over_stdio() {
    let app = spawn_app().await;
    let body = json!({"projectId": app.project_id, "kind": "decision",
        "content": "Bridged memories arrive over stdio"});
    let (status, res) = app.post("/v1/memories", Some(&app.ingest_token), &body).await;
    assert_eq!(status, 201, "{res}");
    let id = res["memory"]["id"].as_str().unwrap().to_string();

    let client = bridge(&app.base, &reader(&app).await).await;
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

    let (found, error) = call(&client, "search", json!({"query": "bridged memories"})).await;
    assert!(!error, "{found}");
    assert!(found.contains(&format!("- {id} ")), "{found}");
    let (full, error) = call(&client, "get_observations", json!({"ids": [id]})).await;
    assert!(
        !error && full.contains("## Bridged memories arrive over stdio"),
        "{full}"
    );
    // The server's tool errors come through as tool errors.
    let (message, error) = call(&client, "timeline", json!({})).await;
    assert!(error && message.contains("anchor"), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_refused_token_or_a_missing_server_is_a_tool_error_not_a_crash() {
    let app = spawn_app().await;
    let client = bridge(&app.base, "not-a-token").await;
    let (message, error) = call(&client, "search", json!({"query": "x"})).await;
    assert!(
        error && message.contains("invalid_token") && message.contains("CAIRN_TOKEN"),
        "{message}"
    );
    client.cancel().await.unwrap();

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = bridge(&dead, &reader(&app).await).await;
    let (message, error) = call(&client, "context", json!({})).await;
    assert!(
        error && message.contains(&dead) && message.contains("CAIRN_URL"),
        "{message}"
    );
    assert!(client.list_all_tools().await.is_err());
    client.cancel().await.unwrap();
}
