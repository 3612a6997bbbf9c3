//! The whole loop: a Claude Code session posted natively, processed by the
//! generator with the heuristic provider, then a new session whose
//! SessionStart context holds what the first one did.

use cairn_testkit::{cc, spawn_app};
use serde_json::json;

use super::support::{MINUTE, post_turn, start, wait_count};

#[tokio::test]
async fn a_new_session_starts_with_the_previous_sessions_summary() {
    let app = spawn_app().await;
    let generator = start(&app, &[]);
    post_turn(&app, "loop-1", "fix the tokenizer crash on empty files").await;
    let (status, _) = app
        .hook(cc("loop-1", "SessionEnd", json!({ "reason": "logout" })))
        .await;
    assert_eq!(status, 200);
    // Observations, the turn summary and the session summary.
    wait_count(
        &app.pool,
        &format!(
            "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
            app.project_id
        ),
        3,
        MINUTE,
    )
    .await;
    generator.stop().await;

    let (status, answer) = app
        .hook(cc("loop-2", "SessionStart", json!({ "source": "startup" })))
        .await;
    assert_eq!(status, 200);
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("## Recent work"), "{context}");
    assert!(
        context.contains("fix the tokenizer crash on empty files"),
        "the summary's request: {context}"
    );
    assert!(
        context.contains("src/parser.rs"),
        "the observation in detail names its files: {context}"
    );
    assert!(
        cairn_shared::tokens::estimate(context) <= 2000,
        "within the default budget"
    );
}
