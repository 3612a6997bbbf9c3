//! The heuristic provider keeps the agent's final message: a turn's `Stop`
//! message becomes its summary's `completed`, through the privacy filter,
//! and file lists name each file once.

use cairn_testkit::{cc, spawn_app};
use serde_json::json;
use uuid::Uuid;

use super::support::{MINUTE, start, wait_count};

const SECRET: &str = "Hunter2Secret";

#[tokio::test]
async fn stop_message_becomes_the_turn_summary_redacted() {
    let app = spawn_app().await;
    let tool = |name: &str, input: serde_json::Value| {
        cc(
            "s-final",
            "PostToolUse",
            json!({ "tool_name": name, "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": input, "tool_response": { "ok": true } }),
        )
    };
    let events = [
        cc(
            "s-final",
            "UserPromptSubmit",
            json!({ "prompt": "reload the fixtures" }),
        ),
        tool("Read", json!({ "file_path": "src/db.rs" })),
        tool("Read", json!({ "file_path": "./src/db.rs" })),
        tool(
            "Edit",
            json!({ "file_path": "src/db.rs", "old_string": "a", "new_string": "b" }),
        ),
        cc(
            "s-final",
            "Stop",
            json!({ "last_assistant_message": format!(
                "Reloaded the fixtures with mysql -u root -p{SECRET} shop, because the old ones were stale."
            ) }),
        ),
    ];
    for body in events {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        &format!(
            "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
            app.project_id
        ),
        2,
        MINUTE,
    )
    .await;
    generator.stop().await;

    let (completed, investigated): (String, String) =
        sqlx::query_as("SELECT completed, investigated FROM summaries WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(
        completed.starts_with("Reloaded the fixtures with mysql -u root -p")
            && completed.contains("because the old ones were stale."),
        "{completed}"
    );
    assert!(!completed.contains(SECRET), "{completed}");
    assert!(completed.ends_with("Modified: src/db.rs."), "{completed}");
    assert!(!investigated.contains("src/db.rs"), "{investigated}");

    let (files_read, files_modified): (Vec<String>, Vec<String>) =
        sqlx::query_as("SELECT files_read, files_modified FROM observations WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(files_read, ["src/db.rs"]);
    assert_eq!(files_modified, ["src/db.rs"]);
}
