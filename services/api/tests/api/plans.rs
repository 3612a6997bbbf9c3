//! Plan capture: a plan file written several times in a session is one
//! plan, the approved text (ExitPlanMode) is the one kept, and plans are
//! found by search.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const PLAN: &str = "/home/dev/.claude/plans/fix-parser.md";

fn tool(session: &str, name: &str, input: Value) -> Value {
    cc(
        session,
        "PostToolUse",
        json!({ "tool_name": name, "tool_use_id": Uuid::new_v4().to_string(),
                "tool_input": input, "tool_response": { "ok": true } }),
    )
}

async fn send(app: &TestApp, body: Value) {
    let (status, res) = app.hook(body).await;
    assert_eq!(status, 200, "{res}");
}

async fn plans(app: &TestApp) -> Vec<(String, String, Value)> {
    sqlx::query_as::<_, (String, String, Value)>(
        "SELECT title, narrative, metadata FROM observations WHERE kind = 'plan' ORDER BY created_at",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_plan_written_three_times_and_approved_is_one_plan_with_the_approved_text() {
    let app = spawn_app().await;
    send(&app, cc("s-plan", "SessionStart", json!({ "source": "startup" }))).await;
    send(
        &app,
        cc(
            "s-plan",
            "UserPromptSubmit",
            json!({ "prompt": "plan the parser fix" }),
        ),
    )
    .await;
    for draft in 1..=3 {
        let text = format!("# Fix the parser\n\nDraft {draft}: guard empty input in parse().\n");
        send(
            &app,
            tool("s-plan", "Write", json!({ "file_path": PLAN, "content": text })),
        )
        .await;
    }
    // An Edit of the plan file changes the stored plan.
    send(
        &app,
        tool(
            "s-plan",
            "Edit",
            json!({ "file_path": PLAN, "old_string": "Draft 3", "new_string": "Draft 3 (edited)" }),
        ),
    )
    .await;
    assert!(plans(&app).await[0].1.contains("Draft 3 (edited)"));
    // A Write elsewhere is not a plan.
    send(
        &app,
        tool(
            "s-plan",
            "Write",
            json!({ "file_path": "/home/dev/app/src/parser.rs", "content": "fn parse() {}" }),
        ),
    )
    .await;
    let approved =
        "# Fix the parser\n\nGuard empty input in parse(); add a regression test for tokenizer overflow.\n";
    send(&app, tool("s-plan", "ExitPlanMode", json!({ "plan": approved }))).await;

    let stored = plans(&app).await;
    assert_eq!(stored.len(), 1, "one plan: {stored:?}");
    let (title, narrative, metadata) = &stored[0];
    assert_eq!(title, "Fix the parser");
    assert_eq!(narrative, approved);
    assert_eq!(metadata["plan"]["approved"], true, "{metadata}");
    assert_eq!(
        metadata["plan"]["versions"], 4,
        "three writes and an edit: {metadata}"
    );
    assert_eq!(metadata["plan"]["path"], PLAN);
    let turn: i32 = sqlx::query_scalar("SELECT prompt_number FROM observations WHERE kind = 'plan'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(turn, 1, "the plan belongs to the turn it was written in");

    // Searchable, as a plan.
    let (status, found) = app
        .get("/v1/search?query=tokenizer%20overflow", Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{found}");
    let hits = found["results"].as_array().cloned().unwrap_or_default();
    assert!(
        hits.iter()
            .any(|h| h.to_string().contains("Fix the parser") && h.to_string().contains("plan")),
        "{found}"
    );

    // Another session's plan of the same file is its own plan; approving
    // without a plan file stores the approved plan alone.
    send(
        &app,
        cc("s-other", "UserPromptSubmit", json!({ "prompt": "another" })),
    )
    .await;
    send(
        &app,
        tool(
            "s-other",
            "Write",
            json!({ "file_path": PLAN, "content": "# Other plan\n" }),
        ),
    )
    .await;
    send(
        &app,
        cc("s-third", "UserPromptSubmit", json!({ "prompt": "third" })),
    )
    .await;
    send(
        &app,
        tool(
            "s-third",
            "ExitPlanMode",
            json!({ "plan": "# Inline plan\nsteps" }),
        ),
    )
    .await;
    let stored = plans(&app).await;
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(stored[2].0, "Inline plan");
    assert_eq!(stored[2].2["plan"]["approved"], true);
}
