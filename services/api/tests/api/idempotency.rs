//! One event posted twice, or eight times at once, is stored once with one job.

use serde_json::json;

use crate::helpers::{cc, spawn_app};

#[tokio::test]
async fn a_repeated_hook_event_is_stored_once() {
    let app = spawn_app().await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "go"})))
        .await;
    let tool = cc(
        "s",
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "t-1", "tool_input": {"command": "ls"}}),
    );
    for _ in 0..2 {
        let (status, _) = app.hook(tool.clone()).await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse'")
            .await,
        1
    );
    let (jobs, events): (i64, i32) = sqlx::query_as("SELECT count(*), max(event_count) FROM generation_jobs")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!((jobs, events), (1, 1), "a duplicate does not join the job twice");
}

#[tokio::test]
async fn eight_concurrent_copies_store_one_event_and_one_job() {
    let app = spawn_app().await;
    let body = json!({"projectId": app.project_id, "sourceType": "hook", "eventType": "tool_use",
                      "occurredAtEpoch": 1_763_700_000_000_i64, "contentSessionId": "c-1",
                      "sourceEventId": "toolu_same", "payload": {"tool_name": "Read"}});
    let posts = (0..8).map(|_| app.post("/v1/events", Some(&app.ingest_token), &body));
    let answers = futures::future::join_all(posts).await;
    let created = answers.iter().filter(|(s, _)| *s == 201).count();
    assert!(answers.iter().all(|(s, _)| *s == 201 || *s == 200), "{answers:?}");
    assert_eq!(created, 1, "exactly one request created the event");
    let ids: std::collections::HashSet<_> = answers.iter().map(|(_, r)| r["event"]["id"].clone()).collect();
    assert_eq!(ids.len(), 1, "every answer names the same event");
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM generation_jobs").await, 1);
    assert_eq!(app.count("SELECT sum(event_count) FROM generation_jobs").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM sessions").await, 1);
}

#[tokio::test]
async fn a_repeated_user_prompt_event_does_not_open_a_second_turn() {
    let app = spawn_app().await;
    let prompt = cc("s", "UserPromptSubmit", json!({"prompt": "go"}));
    let req = || {
        app.client
            .post(format!("{}/v1/hooks/claude-code", app.base))
            .bearer_auth(&app.ingest_token)
            .header("idempotency-key", "prompt-1")
            .json(&prompt)
            .send()
    };
    assert_eq!(req().await.unwrap().status(), 200);
    assert_eq!(req().await.unwrap().status(), 200);
    assert_eq!(
        app.count("SELECT max(prompt_counter)::bigint FROM sessions")
            .await,
        1,
        "the duplicate rolled back"
    );
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
}
