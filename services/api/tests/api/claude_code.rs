//! A whole Claude Code session posted through its native HTTP hooks.

use serde_json::json;

use crate::helpers::{cc, spawn_app};

#[tokio::test]
async fn a_native_session_makes_one_session_seven_events_and_the_designed_jobs() {
    let app = spawn_app().await;
    let s = "7f3c-session-a";

    let (status, start) = app
        .hook(cc(
            s,
            "SessionStart",
            json!({"source": "startup", "model": "claude-sonnet"}),
        ))
        .await;
    assert_eq!(status, 200);
    let ctx = start["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert_eq!(start["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(ctx.contains("No memory for this project yet"), "{ctx}");

    let (status, ans) = app
        .hook(cc(
            s,
            "UserPromptSubmit",
            json!({"prompt": "fix the failing login test"}),
        ))
        .await;
    assert_eq!((status, ans), (200, json!({})));
    for (i, tool) in ["Read", "Edit", "Bash"].iter().enumerate() {
        let (status, ans) = app
            .hook(cc(
                s,
                "PostToolUse",
                json!({"tool_name": tool, "tool_use_id": format!("toolu_{i}"),
                       "tool_input": {"file_path": "src/login.rs"}, "tool_response": {"ok": true}}),
            ))
            .await;
        assert_eq!((status, ans), (200, json!({})));
    }
    let (status, _) = app
        .hook(cc(
            s,
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Fixed."}),
        ))
        .await;
    assert_eq!(status, 200);
    let (status, _) = app
        .hook(cc(s, "SessionEnd", json!({"reason": "prompt_input_exit"})))
        .await;
    assert_eq!(status, 200);

    assert_eq!(app.count("SELECT count(*) FROM sessions").await, 1);
    let (prompt_counter, status): (i32, String) =
        sqlx::query_as("SELECT prompt_counter, status FROM sessions")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!((prompt_counter, status.as_str()), (1, "ended"));

    let events: Vec<(String, Option<i32>)> =
        sqlx::query_as("SELECT event_type, prompt_number FROM agent_events ORDER BY id")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    let expected: Vec<(String, Option<i32>)> = [
        ("SessionStart", 0),
        ("UserPromptSubmit", 1),
        ("PostToolUse", 1),
        ("PostToolUse", 1),
        ("PostToolUse", 1),
        ("Stop", 1),
        ("SessionEnd", 1),
    ]
    .into_iter()
    .map(|(e, n)| (e.to_string(), Some(n)))
    .collect();
    assert_eq!(events, expected);

    // One observation job for the turn (three tool events coalesced, sealed and due at Stop),
    // one turn summary, one session summary.
    let jobs: Vec<(String, i32, bool, String, bool)> = sqlx::query_as(
        "SELECT job_type, event_count, sealed, status, next_attempt_at <= now() FROM generation_jobs ORDER BY created_at",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        jobs,
        vec![
            ("observations".into(), 3, true, "queued".into(), true),
            ("turn_summary".into(), 0, true, "queued".into(), true),
            ("session_summary".into(), 0, true, "queued".into(), true),
        ]
    );
    // Tool events point at the observation job.
    assert_eq!(
        app.count(
            "SELECT count(*) FROM agent_events e JOIN generation_jobs j ON j.id = e.job_id
             WHERE e.event_type = 'PostToolUse' AND j.job_type = 'observations'"
        )
        .await,
        3
    );
}

#[tokio::test]
async fn each_prompt_starts_a_new_turn_with_its_own_job() {
    let app = spawn_app().await;
    let s = "turns";
    for turn in 1..=2 {
        app.hook(cc(
            s,
            "UserPromptSubmit",
            json!({"prompt": format!("task {turn}")}),
        ))
        .await;
        app.hook(cc(
            s,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("t{turn}"), "tool_input": {}}),
        ))
        .await;
        app.hook(cc(s, "Stop", json!({}))).await;
    }
    let turns: Vec<(i32, String)> = sqlx::query_as(
        "SELECT prompt_number, job_type FROM generation_jobs ORDER BY prompt_number, job_type",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        turns,
        vec![
            (1, "observations".into()),
            (1, "turn_summary".into()),
            (2, "observations".into()),
            (2, "turn_summary".into())
        ]
    );
}

#[tokio::test]
async fn an_open_turn_job_waits_for_stop_and_a_long_turn_splits() {
    let app = crate::helpers::spawn_app_with(crate::helpers::Options {
        extra: vec![("CAIRN_MAX_TURN_EVENTS", "2".into())],
        ..Default::default()
    })
    .await;
    let s = "long";
    app.hook(cc(s, "UserPromptSubmit", json!({"prompt": "go"}))).await;
    app.hook(cc(
        s,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "a", "tool_input": {}}),
    ))
    .await;
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE next_attempt_at <= now()")
            .await,
        0,
        "not due while the turn is open"
    );
    for id in ["b", "c"] {
        app.hook(cc(
            s,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {}}),
        ))
        .await;
    }
    let jobs: Vec<(i32, bool)> =
        sqlx::query_as("SELECT event_count, sealed FROM generation_jobs ORDER BY created_at")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(jobs, vec![(2, true), (1, false)]);
}

#[tokio::test]
async fn session_start_context_lists_the_projects_memory() {
    let app = spawn_app().await;
    let (status, _) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "content": "Login tokens expire after 15 minutes", "kind": "discovery"}),
        )
        .await;
    assert_eq!(status, 201);
    let (_, start) = app
        .hook(cc("ctx", "SessionStart", json!({"source": "startup"})))
        .await;
    let ctx = start["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(ctx.contains("Login tokens expire after 15 minutes"), "{ctx}");
}

#[tokio::test]
async fn unknown_agent_is_404_with_a_code() {
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/hooks/emacs",
            Some(&app.ingest_token),
            &cc("s", "Stop", json!({})),
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "unknown_agent");
}
