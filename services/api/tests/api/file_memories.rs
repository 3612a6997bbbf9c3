//! PreToolUse file memories: before Read/Edit/Write the agent gets the live
//! memories about that file, and only those; nothing when there are none or
//! the project opted out.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const CWD: &str = "/home/dev/app";

/// An observation of `project` about `files`, in `state`.
async fn remember(app: &TestApp, project_id: Uuid, title: &str, files: &[&str], state: &str) -> Uuid {
    let id = Uuid::now_v7();
    let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative,
             files_read, state)
         SELECT $1, team_id, id, 'test:' || $1, 'discovery', $2, $2 || ' (narrative)', $3, $4
         FROM projects WHERE id = $5",
    )
    .bind(id)
    .bind(title)
    .bind(files)
    .bind(state)
    .bind(project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn pre_tool(app: &TestApp, tool: &str, path: &str) -> Value {
    let body = cc(
        "s-file",
        "PreToolUse",
        json!({ "tool_name": tool, "tool_use_id": Uuid::new_v4().to_string(),
                "tool_input": { "file_path": path } }),
    );
    let (status, answer) = app.hook(body).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

fn context_of(answer: &Value) -> String {
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn pre_tool_use_answers_with_only_that_files_live_memories() {
    let app = spawn_app().await;
    let (status, other) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "other"}),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let other_project: Uuid = other["project"]["id"].as_str().unwrap().parse().unwrap();

    remember(
        &app,
        app.project_id,
        "parser rejects empty input",
        &["src/parser.rs"],
        "live",
    )
    .await;
    remember(
        &app,
        app.project_id,
        "absolute path note",
        &["/home/dev/app/src/parser.rs"],
        "live",
    )
    .await;
    remember(
        &app,
        app.project_id,
        "old parser layout",
        &["src/parser.rs"],
        "stale",
    )
    .await;
    remember(
        &app,
        app.project_id,
        "merged parser note",
        &["src/parser.rs"],
        "merged",
    )
    .await;
    remember(
        &app,
        app.project_id,
        "lexer keeps spans",
        &["src/lexer.rs"],
        "live",
    )
    .await;
    remember(
        &app,
        other_project,
        "other project parser secret",
        &["src/parser.rs"],
        "live",
    )
    .await;

    let answer = pre_tool(&app, "Read", "/home/dev/app/src/parser.rs").await;
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"], "PreToolUse",
        "{answer}"
    );
    let context = context_of(&answer);
    assert!(context.contains("parser rejects empty input"), "{context}");
    assert!(context.contains("absolute path note"), "{context}");
    assert!(
        context.contains("src/parser.rs"),
        "the heading names the file: {context}"
    );
    for absent in [
        "old parser layout",
        "merged parser note",
        "lexer keeps spans",
        "other project",
    ] {
        assert!(!context.contains(absent), "{absent} leaked into {context}");
    }

    // Edit and Write too; a file nothing is known about gets nothing at all.
    assert!(
        context_of(&pre_tool(&app, "Edit", "/home/dev/app/src/lexer.rs").await).contains("lexer keeps spans")
    );
    assert_eq!(
        pre_tool(&app, "Write", "/home/dev/app/src/new.rs").await,
        json!({})
    );
    // Not a file tool: nothing.
    let bash = cc(
        "s-file",
        "PreToolUse",
        json!({ "tool_name": "Bash", "tool_input": { "command": "cat src/parser.rs" } }),
    );
    assert_eq!(app.hook(bash).await.1, json!({}));
    // The events were stored all the same.
    let stored = app
        .count("SELECT count(*) FROM agent_events WHERE event_type = 'PreToolUse'")
        .await;
    assert_eq!(stored, 4);
}

#[tokio::test]
async fn a_project_can_opt_out_of_file_memories() {
    let app = spawn_app().await;
    remember(
        &app,
        app.project_id,
        "parser rejects empty input",
        &["src/parser.rs"],
        "live",
    )
    .await;
    assert!(context_of(&pre_tool(&app, "Read", &format!("{CWD}/src/parser.rs")).await).contains("parser"));

    let res = app
        .client
        .patch(format!("{}/v1/admin/projects/{}", app.base, app.project_id))
        .bearer_auth(&app.admin_token)
        .json(&json!({ "fileMemories": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["project"]["fileMemories"], false, "{body}");

    assert_eq!(
        pre_tool(&app, "Read", &format!("{CWD}/src/parser.rs")).await,
        json!({})
    );
}

/// Gemini CLI's hook before a tool cannot add context, its AfterTool can
/// (docs/agents.md): a file's memories come with the result of reading it.
#[tokio::test]
async fn gemini_gets_a_files_memories_with_the_result_of_reading_it() {
    let app = spawn_app().await;
    remember(
        &app,
        app.project_id,
        "parser rejects empty input",
        &["src/parser.rs"],
        "live",
    )
    .await;
    let gemini = |event: &str, tool: &str, input: Value| {
        json!({ "session_id": "g-file", "hook_event_name": event, "cwd": CWD,
                "timestamp": "2026-11-27T04:00:00Z", "tool_name": tool, "tool_input": input,
                "tool_response": { "llmContent": "fn parse() {}", "returnDisplay": "" } })
    };
    let post = |body: Value| {
        let app = &app;
        async move {
            let (status, answer) = app.post("/v1/hooks/gemini", Some(&app.ingest_token), &body).await;
            assert_eq!(status, 200, "{answer}");
            answer
        }
    };
    let read = gemini(
        "AfterTool",
        "read_file",
        json!({ "absolute_path": format!("{CWD}/src/parser.rs") }),
    );
    let answer = post(read).await;
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"], "AfterTool",
        "{answer}"
    );
    assert!(
        context_of(&answer).contains("parser rejects empty input"),
        "{answer}"
    );
    // Before the tool, and after one that is not a read: nothing.
    let before = gemini(
        "BeforeTool",
        "read_file",
        json!({ "absolute_path": format!("{CWD}/src/parser.rs") }),
    );
    assert_eq!(post(before).await, json!({}));
    let shell = gemini(
        "AfterTool",
        "run_shell_command",
        json!({ "command": "cat src/parser.rs" }),
    );
    assert_eq!(post(shell).await, json!({}));
    // A file nothing is known about: nothing.
    let unknown = gemini(
        "AfterTool",
        "read_file",
        json!({ "absolute_path": format!("{CWD}/src/new.rs") }),
    );
    assert_eq!(post(unknown).await, json!({}));
}
