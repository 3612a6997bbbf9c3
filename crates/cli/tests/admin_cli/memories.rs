//! `cairn memories`: in a private-first project, the author promotes and
//! takes back their own memory from the command line; another member
//! cannot; an admin lists the review queue and rejects.

use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::json;

use crate::support::{admin, cairn};

/// A private-first project and one generated memory of `token`'s session.
async fn her_memory(app: &TestApp, token: &str) -> String {
    app.private_first().await;
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    for body in [
        cc(
            "s-cli",
            "UserPromptSubmit",
            json!({"prompt": "Why does the build fail?"}),
        ),
        cc(
            "s-cli",
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": "t-1",
            "tool_input": {"file_path": "/home/dev/app/Cargo.lock"},
            "tool_response": {"content": "name = \"openssl\"\nversion = \"0.10.1\""}}),
        ),
        cc(
            "s-cli",
            "Stop",
            json!({"last_assistant_message": "The build failed: the lockfile pinned an old openssl."}),
        ),
        cc("s-cli", "SessionEnd", json!({"reason": "exit"})),
    ] {
        let (status, res) = app.post(&path, Some(token), &body).await;
        assert_eq!(status, 200, "{res}");
    }
    app.generate().await;
    sqlx::query_scalar(
        "SELECT id::text FROM observations WHERE visibility = 'private' ORDER BY created_at LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .expect("a private memory of her session")
}

async fn visibility(app: &TestApp, id: &str) -> String {
    sqlx::query_scalar("SELECT visibility FROM observations WHERE id = $1::uuid")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_author_promotes_and_takes_back_and_an_admin_reviews() {
    let app = spawn_app().await;
    let (_, alice) = app.member_token("alice@acme.test").await;
    let (_, bob) = app.member_token("bob@acme.test").await;
    let id = her_memory(&app, &alice).await;

    // The admin token is a team token: it names the project.
    let refused = admin(&app, &["memories", "review"]).await;
    assert!(refused.stderr.contains("project_required"), "{}", refused.stderr);
    let queue = admin(&app, &["memories", "review", "--project", "default", "--json"]).await;
    assert!(queue.ok, "{}", queue.stderr);
    assert!(queue.stdout.contains(&id), "{}", queue.stdout);
    let table = admin(&app, &["memories", "review", "--project", "default"]).await;
    assert!(
        table.stdout.contains(&id) && table.stdout.contains("private"),
        "{}",
        table.stdout
    );

    let refused = cairn(&app, &bob, &["memories", "promote", &id], b"").await;
    assert!(!refused.ok, "bob promoted her memory: {}", refused.stdout);
    assert!(refused.stderr.contains("memory_not_found"), "{}", refused.stderr);
    assert_eq!(visibility(&app, &id).await, "private");

    let done = cairn(&app, &alice, &["memories", "promote", &id, "--json"], b"").await;
    assert!(done.ok, "{}", done.stderr);
    assert_eq!(done.json()["memory"]["visibility"], "team");
    assert_eq!(visibility(&app, &id).await, "team");

    let back = cairn(&app, &alice, &["memories", "unpromote", &id], b"").await;
    assert!(back.ok, "{}", back.stderr);
    assert_eq!(visibility(&app, &id).await, "private");

    let rejected = cairn(&app, &alice, &["memories", "reject", &id], b"").await;
    assert!(!rejected.ok, "a member rejected in review: {}", rejected.stdout);
    let rejected = admin(&app, &["memories", "reject", &id]).await;
    assert!(rejected.ok, "{}", rejected.stderr);
    let queue = admin(&app, &["memories", "review", "--project", "default", "--json"]).await;
    assert!(
        !queue.stdout.contains(&id),
        "a rejected memory left review: {}",
        queue.stdout
    );
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action LIKE 'memory.%'")
        .await;
    assert_eq!(audited, 3, "promote, unpromote, reject");
}
