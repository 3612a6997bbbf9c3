//! Private content, secrets and skip-listed tools never reach the database:
//! the assertions read the stored rows.

use serde_json::json;

use crate::helpers::{cc, spawn_app};

/// Everything stored for the project, as one string.
async fn stored_text(app: &crate::helpers::TestApp) -> String {
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT payload::text || metadata::text FROM agent_events
         UNION ALL SELECT metadata::text FROM sessions
         UNION ALL SELECT content || metadata::text FROM observations",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    rows.join("\n")
}

/// Fake secrets of every kind the filter must catch, built so this file does
/// not itself look like a leaked credential.
fn secrets() -> Vec<(&'static str, String)> {
    let a = |n: usize| "a1B2c3D4e5".repeat(10)[..n].to_string();
    vec![
        ("aws", format!("AKIA{}", "IOSFODNN7EXAMPLE")),
        (
            "aws_secret",
            format!(
                "aws_secret_access_key = {}",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            ),
        ),
        ("gcp", format!("AIza{}", a(35))),
        (
            "azure",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={}==;",
                "Q".repeat(86)
            ),
        ),
        ("github", format!("ghp_{}", a(36))),
        ("gitlab", format!("glpat-{}", a(20))),
        (
            "slack",
            format!("xoxb-{}-{}-{}", "123456789012", "123456789012", a(24)),
        ),
        ("stripe", format!("sk_live_{}", a(24))),
        ("openai", format!("sk-proj-{}", a(40))),
        ("anthropic", format!("sk-ant-api03-{}", a(60))),
        (
            "pem",
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
                "MIIEowIBAAKCAQEA".to_string() + &a(48)
            ),
        ),
        (
            "jwt",
            format!("eyJhbGciOiJIUzI1NiJ9.{}.{}", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", a(43)),
        ),
        (
            "url_password",
            "postgres://admin:hunter2hunter2@db.internal:5432/app".to_string(),
        ),
        (
            "env",
            "DATABASE_PASSWORD=correct-horse-battery-staple".to_string(),
        ),
    ]
}

fn secret_part(kind: &str, secret: &str) -> String {
    match kind {
        "aws_secret" => "wJalrXUtnFEMI/K7MDENG".into(),
        "azure" => "Q".repeat(86),
        "pem" => "MIIEowIBAAKCAQEA".into(),
        "url_password" => "hunter2hunter2".into(),
        "env" => "correct-horse-battery-staple".into(),
        _ => secret.to_string(),
    }
}

#[tokio::test]
async fn secrets_of_every_kind_are_redacted_before_storage() {
    let app = spawn_app().await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "deploy"})))
        .await;
    for (i, (kind, secret)) in secrets().into_iter().enumerate() {
        let (status, _) = app
            .hook(cc(
                "s",
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_use_id": format!("t{i}"),
                       "tool_input": {"command": format!("cat .env # {kind}")},
                       "tool_response": {"stdout": format!("line before\n{secret}\nline after")}}),
            ))
            .await;
        assert_eq!(status, 200);
    }
    let text = stored_text(&app).await;
    for (kind, secret) in secrets() {
        let part = secret_part(kind, &secret);
        assert!(!text.contains(&part), "{kind} secret reached the database");
    }
    assert!(
        text.contains("line before") && text.contains("line after"),
        "surrounding text is kept"
    );
    assert!(text.contains("REDACTED"), "a marker shows where a secret was");
    let redacted: i64 = sqlx::query_scalar("SELECT count(*) FROM agent_events WHERE metadata ? 'privacy'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        redacted,
        secrets().len() as i64,
        "each redacted event records it in metadata"
    );
}

#[tokio::test]
async fn private_tags_are_stripped_and_an_entirely_private_turn_stores_nothing() {
    let app = spawn_app().await;
    app.hook(cc(
        "s",
        "UserPromptSubmit",
        json!({"prompt": "refactor <private>my salary is 123k</private> the parser"}),
    ))
    .await;
    app.hook(cc(
        "s",
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": "a",
               "tool_response": {"content": "x <private>internal-codename-zebra</private> y"}}),
    ))
    .await;
    app.hook(cc("s", "Stop", json!({}))).await;
    // A turn whose prompt is entirely private: none of its events are stored.
    app.hook(cc(
        "s",
        "UserPromptSubmit",
        json!({"prompt": "<private>look at /etc/secret-project-falcon</private>"}),
    ))
    .await;
    app.hook(cc(
        "s",
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": "b", "tool_input": {"file_path": "/etc/secret-project-falcon"}}),
    ))
    .await;
    app.hook(cc("s", "Stop", json!({"last_assistant_message": "falcon done"})))
        .await;

    let text = stored_text(&app).await;
    for private in [
        "123k",
        "internal-codename-zebra",
        "secret-project-falcon",
        "falcon done",
    ] {
        assert!(!text.contains(private), "{private} reached the database");
    }
    assert!(text.contains("refactor") && text.contains("the parser"));
    let turns: Vec<Option<i32>> =
        sqlx::query_scalar("SELECT DISTINCT prompt_number FROM agent_events ORDER BY 1")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(turns, vec![Some(1)], "nothing of turn 2 is stored");
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE prompt_number = 2")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT max(prompt_counter)::bigint FROM sessions")
            .await,
        2,
        "the turn still counts"
    );
}

#[tokio::test]
async fn skip_listed_tools_and_oversize_fields() {
    let app = crate::helpers::spawn_app_with(crate::helpers::Options {
        extra: vec![("CAIRN_SKIP_TOOLS", "TodoWrite,mcp__vault__*".into())],
        ..Default::default()
    })
    .await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "go"})))
        .await;
    for (id, tool) in [
        ("1", "TodoWrite"),
        ("2", "mcp__vault__read_secret"),
        ("3", "todowrite"),
    ] {
        let (status, body) = app
            .hook(cc(
                "s",
                "PostToolUse",
                json!({"tool_name": tool, "tool_use_id": id, "tool_input": {"x": "skipme"}}),
            ))
            .await;
        assert_eq!((status, body), (200, json!({})));
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE tool_name IS NOT NULL")
            .await,
        0
    );
    let (status, res) = app
        .post(
            "/v1/events",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "sourceType": "hook", "eventType": "tool_use",
                    "occurredAtEpoch": 1_763_700_000_000_i64, "payload": {"tool_name": "TodoWrite"}}),
        )
        .await;
    assert_eq!((status, res["skipped"].as_str()), (200, Some("skipped_tool")));
    assert_eq!(app.count("SELECT count(*) FROM generation_jobs").await, 0);

    // The test app caps fields at 4096 bytes: head and tail are kept, with a marker.
    let big = format!("HEAD{}TAIL", "x".repeat(20_000));
    app.hook(cc(
        "s",
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": "big", "tool_response": {"content": big}}),
    ))
    .await;
    let stored: String = sqlx::query_scalar(
        "SELECT payload->'tool_response'->>'content' FROM agent_events WHERE tool_name = 'Read'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(stored.len() < 4096 + 100, "{}", stored.len());
    assert!(stored.starts_with("HEAD") && stored.ends_with("TAIL"));
    assert!(stored.contains("elided"), "a marker says how much was cut");
}
