//! File versions: a hook call after a tool ran on a file carries the file's
//! hash (`fileHash`); the API records the version, and a Read that finds a
//! version other than the one a live memory was drawn from marks that memory
//! stale (logged), leaving memories of that version, of other files and
//! without a recorded version alone. The agent's own edits, and its Reads of
//! what it wrote, are left to the completion; a malformed hash is ignored,
//! never a failed hook.

use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const H2: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const H3: &str = "3333333333333333333333333333333333333333333333333333333333333333";

async fn remember(app: &TestApp, title: &str, file: &str, refs: serde_json::Value) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, files_read, file_refs)
         VALUES ($1, $2, $3, 'test:' || $1, 'discovery', $4, ARRAY[$5], $6)",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(title)
    .bind(file)
    .bind(refs)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn state(app: &TestApp, id: Uuid) -> String {
    sqlx::query_scalar("SELECT state FROM observations WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

async fn tool(app: &TestApp, tool: &str, hash: &str) {
    let body = cc(
        "s-versions",
        "PostToolUse",
        json!({ "tool_name": tool, "tool_use_id": Uuid::new_v4().to_string(),
                "tool_input": { "file_path": "/home/dev/app/src/a.rs", "old_string": "a", "new_string": "b" },
                "tool_response": { "ok": true } }),
    );
    let (status, res) = app.hook_with_hash(body, hash).await;
    assert_eq!(status, 200, "{res}");
}

async fn versions(app: &TestApp) -> Vec<(String, String)> {
    sqlx::query_as("SELECT path, hash FROM file_versions ORDER BY seen_at")
        .fetch_all(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_read_of_another_version_makes_memories_of_the_old_one_stale() {
    let app = spawn_app().await;
    let (status, res) = app
        .hook(cc("s-versions", "SessionStart", json!({ "source": "startup" })))
        .await;
    assert_eq!(status, 200, "{res}");
    let old = remember(
        &app,
        "a.rs at v1",
        "src/a.rs",
        json!([{ "path": "src/a.rs", "hash": H1 }]),
    )
    .await;
    let current = remember(
        &app,
        "a.rs at v2",
        "src/a.rs",
        json!([{ "path": "src/a.rs", "hash": H2 }]),
    )
    .await;
    let unversioned = remember(&app, "a.rs, no version", "src/a.rs", json!([])).await;
    let other = remember(
        &app,
        "b.rs at v1",
        "src/b.rs",
        json!([{ "path": "src/b.rs", "hash": H1 }]),
    )
    .await;

    // A malformed hash: stored event, nothing else.
    tool(&app, "Read", "not-a-hash").await;
    assert!(versions(&app).await.is_empty());

    tool(&app, "Read", H2).await;
    assert_eq!(versions(&app).await, vec![("src/a.rs".into(), H2.into())]);
    assert_eq!(state(&app, old).await, "stale");
    for live in [current, unversioned, other] {
        assert_eq!(state(&app, live).await, "live", "{live}");
    }
    let logged: Vec<(Uuid, String, String)> =
        sqlx::query_as("SELECT observation_id, action, reason FROM memory_changes")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        logged,
        vec![(old, "stale".into(), "its file was read at another version".into())]
    );

    // The agent's own edit records the version and re-marks nothing here,
    // nor does its Read of its own result: the turn's completion re-marks.
    tool(&app, "Edit", H3).await;
    assert_eq!(versions(&app).await.len(), 2);
    tool(&app, "Read", H3).await;
    assert_eq!(state(&app, current).await, "live");
}
