//! The checkout a session works on: `head` and `branch` from the hook
//! client's query are kept on the session at its start and at each prompt,
//! and the commit becomes known to the project; a malformed commit id is
//! dropped, never a failed hook.

use serde_json::{Value, json};

use crate::helpers::*;

const A: &str = "0123456789abcdef0123456789abcdef01234567";
const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

async fn hook_at(app: &TestApp, query: &str, body: Value) {
    let (status, res) = app
        .post(
            &format!("/v1/hooks/claude-code?{query}"),
            Some(&app.ingest_token),
            &body,
        )
        .await;
    assert_eq!(status, 200, "{res}");
}

async fn checkout(app: &TestApp) -> (Option<String>, Option<String>, Option<String>) {
    sqlx::query_as("SELECT head_commit, branch, repo_root FROM sessions WHERE external_session_id = 's-git'")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_sessions_head_and_branch_follow_the_checkout() {
    let app = spawn_app().await;
    let at = |head: &str, branch: &str| format!("repoRoot=%2Fhome%2Fdev%2Fapp&head={head}&branch={branch}");
    hook_at(
        &app,
        &at(A, "main"),
        cc("s-git", "SessionStart", json!({ "source": "startup" })),
    )
    .await;
    assert_eq!(
        checkout(&app).await,
        (Some(A.into()), Some("main".into()), Some("/home/dev/app".into()))
    );

    // A tool event does not move it; the next prompt does.
    hook_at(
        &app,
        &at(B, "feat"),
        cc(
            "s-git",
            "PostToolUse",
            json!({ "tool_name": "Bash", "tool_input": {} }),
        ),
    )
    .await;
    assert_eq!(checkout(&app).await.0.as_deref(), Some(A));
    hook_at(
        &app,
        &at(B, "feat"),
        cc("s-git", "UserPromptSubmit", json!({ "prompt": "go on" })),
    )
    .await;
    assert_eq!(
        checkout(&app).await,
        (Some(B.into()), Some("feat".into()), Some("/home/dev/app".into()))
    );

    let commits: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT commit_sha, branch FROM project_commits ORDER BY first_seen_at")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        commits,
        vec![(A.into(), Some("main".into())), (B.into(), Some("feat".into()))]
    );

    // Not a commit id: dropped, the hook still answers.
    hook_at(
        &app,
        &at("not-hex;drop", "feat"),
        cc("s-git", "UserPromptSubmit", json!({ "prompt": "more" })),
    )
    .await;
    assert_eq!(checkout(&app).await.0.as_deref(), Some(B));
}
