//! Health and `/v1/info` report the generation queue: jobs by status, the
//! oldest due job's wait, and `degraded` once that wait passes the threshold.

use serde_json::json;

use super::helpers::{cc, spawn_app};

#[tokio::test]
async fn health_degrades_when_a_due_job_waits_too_long() {
    let app = spawn_app().await;
    for (event, extra) in [
        ("UserPromptSubmit", json!({ "prompt": "p" })),
        (
            "PostToolUse",
            json!({ "tool_name": "Bash", "tool_use_id": "t1", "tool_input": { "command": "ls" } }),
        ),
        ("Stop", json!({})),
    ] {
        let (status, _) = app.hook(cc("h-1", event, extra)).await;
        assert_eq!(status, 200);
    }
    let (status, res) = app.get("/api/health", Some(&app.admin_token)).await;
    assert_eq!((status, res["status"].as_str()), (200, Some("ok")), "{res}");
    assert_eq!(res["jobs"]["by_status"]["queued"], 2, "{res}");
    assert!(
        res["jobs"]["oldest_queued_age_seconds"].as_f64().unwrap() < 60.0,
        "{res}"
    );

    sqlx::query("UPDATE generation_jobs SET next_attempt_at = now() - interval '2 hours'")
        .execute(&app.pool)
        .await
        .unwrap();
    // Without a token: only the verdict, no team's job counts.
    let (status, res) = app.get("/api/health", None).await;
    assert_eq!((status, res["status"].as_str()), (503, Some("degraded")), "{res}");
    assert!(res.get("jobs").is_none(), "counts need an admin token: {res}");
    let (_, res) = app.get("/api/health", Some(&app.ingest_token)).await;
    assert!(res.get("jobs").is_none(), "counts need an admin token: {res}");
    let (status, res) = app.get("/api/health", Some(&app.admin_token)).await;
    assert_eq!((status, res["status"].as_str()), (503, Some("degraded")), "{res}");
    assert_eq!(res["jobs"]["status"], "degraded");
    assert!(
        res["jobs"]["oldest_queued_age_seconds"].as_f64().unwrap() > 7000.0,
        "{res}"
    );
    assert_eq!(res["postgres"], "ok");

    let (status, info) = app.get("/v1/info", Some(&app.admin_token)).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["queue"]["queued"], 2, "{info}");
    assert_eq!(info["jobs"]["status"], "degraded", "{info}");
}

#[tokio::test]
async fn a_job_not_yet_due_does_not_count_as_waiting() {
    let app = spawn_app().await;
    // An open turn (no Stop): its job is due only after the idle delay.
    app.hook(cc("h-2", "UserPromptSubmit", json!({ "prompt": "p" })))
        .await;
    let (status, _) = app
        .hook(cc(
            "h-2",
            "PostToolUse",
            json!({ "tool_name": "Bash", "tool_use_id": "t", "tool_input": {} }),
        ))
        .await;
    assert_eq!(status, 200);
    let (_, res) = app.get("/api/health", Some(&app.admin_token)).await;
    assert_eq!(res["jobs"]["by_status"]["queued"], 1, "{res}");
    assert!(res["jobs"]["oldest_queued_age_seconds"].is_null(), "{res}");
}
