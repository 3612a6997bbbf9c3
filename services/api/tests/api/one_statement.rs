//! Tool events of a known session are stored in one statement
//! (`ingest/turn_event.rs`); these check that path keeps what the
//! transaction path promised: one job per turn however the events race,
//! sealing at the turn's limit, private turns, duplicates.

use cairn_testkit::{Options, spawn_app_with};
use serde_json::json;

use crate::helpers::{cc, spawn_app};

fn tool(session: &str, n: usize) -> serde_json::Value {
    cc(
        session,
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": format!("toolu_{session}_{n}"),
               "tool_input": {"file_path": format!("src/f{n}.rs")}, "tool_response": "ok"}),
    )
}

#[tokio::test]
async fn tool_events_racing_into_a_new_turn_join_one_job() {
    let app = spawn_app().await;
    app.hook(cc("s", "SessionStart", json!({"source": "startup"})))
        .await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "read them all"})))
        .await;
    // No job is open for the turn yet: every one of these may try to create it.
    let answers = futures::future::join_all((0..24).map(|n| app.hook(tool("s", n)))).await;
    assert!(answers.iter().all(|(s, _)| *s == 200), "{answers:?}");
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse' AND prompt_number = 1")
            .await,
        24
    );
    let (jobs, events): (i64, i64) = sqlx::query_as(
        "SELECT count(*), sum(event_count) FROM generation_jobs WHERE job_type = 'observations'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        (jobs, events),
        (1, 24),
        "one job for the turn, counting every event"
    );
    assert_eq!(
        app.count(
            "SELECT count(*) FROM agent_events e JOIN generation_jobs j ON j.id = e.job_id
              WHERE e.event_type = 'PostToolUse' AND j.prompt_number = 1"
        )
        .await,
        24,
        "every event names the turn's job"
    );
}

#[tokio::test]
async fn a_busy_turn_is_sealed_at_its_limit_and_goes_on_in_a_new_job() {
    let app = spawn_app_with(Options {
        extra: vec![("CAIRN_MAX_TURN_EVENTS", "5".into())],
        ..Default::default()
    })
    .await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "go"})))
        .await;
    let answers = futures::future::join_all((0..23).map(|n| app.hook(tool("s", n)))).await;
    assert!(answers.iter().all(|(s, _)| *s == 200), "{answers:?}");
    let jobs: Vec<(i32, bool, i64)> = sqlx::query_as(
        "SELECT j.event_count, j.sealed, (SELECT count(*) FROM agent_events e WHERE e.job_id = j.id)
           FROM generation_jobs j WHERE j.job_type = 'observations' ORDER BY j.created_at",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(jobs.iter().map(|j| i64::from(j.0)).sum::<i64>(), 23, "{jobs:?}");
    assert!(
        jobs.iter()
            .all(|&(count, _, rows)| count <= 5 && i64::from(count) == rows),
        "each job holds at most the limit, and counts what it holds: {jobs:?}"
    );
    assert_eq!(
        jobs.iter().filter(|j| !j.1).count(),
        1,
        "only the last job is still open: {jobs:?}"
    );
}

#[tokio::test]
async fn tool_events_of_a_private_turn_are_dropped_and_a_repeat_is_a_duplicate() {
    let app = spawn_app().await;
    app.hook(cc(
        "s",
        "UserPromptSubmit",
        json!({"prompt": "<private>all of it</private>"}),
    ))
    .await;
    let (status, _) = app.hook(tool("s", 1)).await;
    assert_eq!(status, 200);
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse'")
            .await,
        0
    );
    assert_eq!(app.count("SELECT count(*) FROM generation_jobs").await, 0);

    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "now in the open"})))
        .await;
    for _ in 0..3 {
        let (status, _) = app.hook(tool("s", 2)).await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse'")
            .await,
        1
    );
    assert_eq!(
        app.count("SELECT count(*) FROM agent_event_keys").await,
        app.count("SELECT count(*) FROM agent_events").await
    );
    assert_eq!(
        app.count("SELECT sum(event_count) FROM generation_jobs").await,
        1,
        "a repeat joins nothing"
    );
}

#[tokio::test]
async fn the_events_api_answers_a_tool_event_with_its_stored_fields() {
    let app = spawn_app().await;
    let body = |event_type: &str, id: &str| {
        json!({"projectId": app.project_id, "sourceType": "hook", "eventType": event_type,
               "occurredAtEpoch": 1_763_700_000_000_i64, "contentSessionId": "c-1",
               "sourceEventId": id, "payload": {"tool_name": "Read", "n": id}})
    };
    let (status, _) = app
        .post("/v1/events", Some(&app.ingest_token), &body("user_prompt", "p1"))
        .await;
    assert_eq!(status, 201);
    let (status, first) = app
        .post("/v1/events", Some(&app.ingest_token), &body("tool_use", "t1"))
        .await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["event"]["payload"]["n"], "t1");
    let (status, again) = app
        .post("/v1/events", Some(&app.ingest_token), &body("tool_use", "t1"))
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["event"]["id"], first["event"]["id"]);
}
