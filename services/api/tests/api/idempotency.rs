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

#[tokio::test]
async fn an_id_less_prompt_retried_opens_no_second_turn_but_the_same_words_next_turn_do() {
    let app = spawn_app().await;
    let prompt = cc("s", "UserPromptSubmit", json!({"prompt": "run the tests"}));
    for _ in 0..3 {
        assert_eq!(app.hook(prompt.clone()).await.0, 200);
    }
    assert_eq!(
        app.count("SELECT max(prompt_counter)::bigint FROM sessions")
            .await,
        1
    );
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
    let tool = cc(
        "s",
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "make test"}}),
    );
    assert_eq!(app.hook(tool).await.0, 200);
    assert_eq!(
        app.hook(cc("s", "Stop", json!({"last_assistant_message": "ok"})))
            .await
            .0,
        200
    );
    // The user types the same words in the next turn: a new turn, its own summary.
    assert_eq!(app.hook(prompt.clone()).await.0, 200);
    assert_eq!(
        app.hook(cc("s", "Stop", json!({"last_assistant_message": "ok"})))
            .await
            .0,
        200
    );
    assert_eq!(
        app.count("SELECT max(prompt_counter)::bigint FROM sessions")
            .await,
        2
    );
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'UserPromptSubmit'")
            .await,
        2
    );
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE job_type = 'turn_summary'")
            .await,
        2
    );
}

#[tokio::test]
async fn claude_mem_events_retried_are_stored_once_by_tool_use_id_or_idempotency_key() {
    let app = spawn_app().await;
    let event = json!({
        "projectId": app.project_id, "contentSessionId": "cm-1", "platformSource": "claude-code",
        "sourceType": "hook", "eventType": "tool_use", "occurredAtEpoch": 1_763_900_000_000i64,
        "payload": {"tool_name": "Read", "tool_use_id": "toolu_9", "tool_input": {"file_path": "a.rs"}}
    });
    let (first, a) = app.post("/v1/events", Some(&app.ingest_token), &event).await;
    let (second, b) = app.post("/v1/events", Some(&app.ingest_token), &event).await;
    assert_eq!((first, second), (201, 200), "{a} {b}");
    assert_eq!(a["event"]["id"], b["event"]["id"]);
    // Another session may use the same tool id.
    let mut other = event.clone();
    other["contentSessionId"] = json!("cm-2");
    assert_eq!(
        app.post("/v1/events", Some(&app.ingest_token), &other).await.0,
        201
    );

    // No id in the payload: the Idempotency-Key header.
    let plain = json!({
        "projectId": app.project_id, "contentSessionId": "cm-1", "sourceType": "hook",
        "eventType": "assistant_message", "occurredAtEpoch": 1_763_900_000_000i64,
        "payload": {"last_assistant_message": "done"}
    });
    let send = || {
        app.client
            .post(format!("{}/v1/events", app.base))
            .bearer_auth(&app.ingest_token)
            .header("idempotency-key", "retry-7")
            .json(&plain)
            .send()
    };
    assert_eq!(send().await.unwrap().status(), 201);
    assert_eq!(send().await.unwrap().status(), 200);
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 3);
}

#[tokio::test]
async fn an_id_less_stop_arriving_late_after_the_next_prompt_is_still_a_duplicate() {
    let app = spawn_app().await;
    let stop = cc(
        "late",
        "Stop",
        json!({"stop_hook_active": false,
               "last_assistant_message": "Fixed the flaky test by pinning the random seed in tests/common/mod.rs."}),
    );
    app.hook(cc(
        "late",
        "UserPromptSubmit",
        json!({"prompt": "fix the flaky test"}),
    ))
    .await;
    assert_eq!(app.hook(stop.clone()).await.0, 200);
    app.hook(cc("late", "UserPromptSubmit", json!({"prompt": "now the docs"})))
        .await;
    // The first Stop's answer was lost; its copy arrives during turn 2.
    assert_eq!(app.hook(stop).await.0, 200);
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'Stop'")
            .await,
        1,
        "the late copy is the same event"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE job_type = 'turn_summary'")
            .await,
        1,
        "turn 2 was not ended by turn 1's stop"
    );
    // Stops with no final message, or a short one, cannot be told apart
    // across turns: each turn keeps its own.
    let bare = cc(
        "bare",
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    );
    for prompt in ["one", "two"] {
        app.hook(cc("bare", "UserPromptSubmit", json!({"prompt": prompt})))
            .await;
        assert_eq!(app.hook(bare.clone()).await.0, 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events e JOIN sessions s ON s.id = e.session_id WHERE s.external_session_id = 'bare' AND e.event_type = 'Stop'")
            .await,
        2
    );
}

#[tokio::test]
async fn two_sessions_opening_with_the_same_words_each_keep_their_prompt() {
    let app = spawn_app().await;
    for session in ["monday", "tuesday"] {
        let (status, _) = app
            .hook(cc(session, "UserPromptSubmit", json!({"prompt": "continue"})))
            .await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'UserPromptSubmit'")
            .await,
        2,
        "the second session's first prompt is not a duplicate of the first's"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM sessions WHERE prompt_counter = 1")
            .await,
        2
    );
}
