//! With Redis unreachable, ingest still answers 2xx, stores every row, and
//! says the job is `queued_only`; with Redis up, due jobs are `enqueued`.

use serde_json::json;

use crate::helpers::{Options, cc, spawn_app, spawn_app_with};

#[tokio::test]
async fn ingest_succeeds_without_redis_and_reports_queued_only() {
    // Nothing listens on port 1: Redis is unreachable.
    let app = spawn_app_with(Options {
        redis_url: "redis://127.0.0.1:1".into(),
        ..Default::default()
    })
    .await;
    let (status, _) = app
        .hook(cc("s", "UserPromptSubmit", json!({"prompt": "go"})))
        .await;
    assert_eq!(status, 200);
    let (status, _) = app
        .hook(cc(
            "s",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "1"}),
        ))
        .await;
    assert_eq!(status, 200);
    let (status, res) = app
        .post(
            "/v1/events",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "contentSessionId": "s", "sourceType": "hook",
                    "eventType": "assistant_message", "occurredAtEpoch": 1_763_700_000_000_i64, "payload": {}}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    assert_eq!(res["generationJob"]["transport"], "queued_only");
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 3);
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE status = 'queued'")
            .await,
        2
    );
    let (status, res) = app.get("/api/health", None).await;
    assert_eq!((status, res["redis"].as_str()), (503, Some("down")));
    let (status, _) = app.get("/api/readiness", None).await;
    assert_eq!(status, 200, "readiness needs only Postgres");
}

#[tokio::test]
async fn due_jobs_are_enqueued_on_redis() {
    let app = spawn_app().await;
    let (status, res) = app
        .post(
            "/v1/events",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "sourceType": "api", "eventType": "note",
                    "occurredAtEpoch": 1_763_700_000_000_i64, "payload": {}}),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(res["generationJob"]["transport"], "enqueued");
}
