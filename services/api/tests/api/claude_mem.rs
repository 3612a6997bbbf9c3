//! claude-mem's server-mode hooks, as COMPAT.md §2 describes them, work unchanged.

use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn auth_is_401_without_credentials_and_403_for_bad_or_read_only_tokens() {
    let app = spawn_app().await;
    let body = json!({"projectId": app.project_id, "externalSessionId": "s"});
    let (status, res) = app.post("/v1/sessions/start", None, &body).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (401, Some("missing_credentials"))
    );

    let (status, res) = app.post("/v1/sessions/start", Some("not-a-token"), &body).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("invalid_token"))
    );

    // A token signed by another server (other key) is unknown here.
    let forged = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiIwMTkzMDAwMC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDAiLCJzdWIiOiIwMTkzMDAwMC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDAiLCJzY3AiOlsiaW5nZXN0Il0sImlhdCI6MSwiaXNzIjoiY2Fpcm4ifQ.c2lnbmF0dXJl";
    let (status, _) = app.post("/v1/sessions/start", Some(forged), &body).await;
    assert_eq!(status, 403);

    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;
    let (status, res) = app.post("/v1/sessions/start", Some(&reader), &body).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("insufficient_scope"))
    );

    // X-Api-Key works like a bearer token.
    let res = app
        .client
        .post(format!("{}/v1/sessions/start", app.base))
        .header("x-api-key", &app.ingest_token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201);
}

#[tokio::test]
async fn a_revoked_token_is_refused_here_and_after_a_restart() {
    let app = spawn_app().await;
    let id: uuid::Uuid = sqlx::query_scalar("SELECT id FROM api_tokens WHERE name = 'bootstrap ingest'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let (status, _) = app.get("/v1/jobs", Some(&app.ingest_token)).await;
    assert_eq!(status, 200);
    let (status, _) = app
        .post(
            &format!("/v1/admin/tokens/{id}/revoke"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, res) = app.get("/v1/jobs", Some(&app.ingest_token)).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("token_revoked"))
    );
    let restarted = app.restart().await;
    let (status, _) = restarted.get("/v1/jobs", Some(&app.ingest_token)).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn the_server_mode_flow_of_one_turn() {
    let app = spawn_app().await;
    let tok = Some(app.ingest_token.as_str());
    let start = json!({
        "projectId": app.project_id, "contentSessionId": "cc-1", "externalSessionId": "cc-1",
        "platformSource": "claude-code", "agentId": "main", "agentType": "claude-code",
        "metadata": {"project": "app", "prompt": "add rate limiting to the login route"}
    });
    // UserPromptSubmit → start: 201 created, and the prompt opens turn 1.
    let (status, res) = app.post("/v1/sessions/start", tok, &start).await;
    assert_eq!(status, 201, "{res}");
    let session_id = res["session"]["id"].as_str().unwrap().to_string();
    assert_eq!(res["session"]["externalSessionId"], "cc-1");
    assert_eq!(res["session"]["promptCount"], 1);

    // PostToolUse → event attached through contentSessionId only.
    let tool = json!({
        "projectId": app.project_id, "contentSessionId": "cc-1", "platformSource": "claude-code",
        "sourceType": "hook", "eventType": "tool_use", "occurredAtEpoch": 1_763_700_000_000_i64,
        "payload": {"tool_name": "Edit", "tool_input": {"file_path": "src/login.rs"}, "tool_response": "ok",
                    "tool_use_id": "toolu_1", "cwd": "/app", "platformSource": "claude-code"}
    });
    let (status, res) = app.post("/v1/events", tok, &tool).await;
    assert_eq!(status, 201, "{res}");
    let event = &res["event"];
    assert_eq!(event["serverSessionId"], session_id.as_str());
    assert_eq!(event["eventType"], "tool_use");
    assert_eq!(event["occurredAtEpoch"], 1_763_700_000_000_i64);
    assert_eq!(event["promptNumber"], 1);
    let job = &res["generationJob"];
    assert_eq!(job["status"], "queued");
    assert_eq!(
        job["transport"], "skipped",
        "the turn is open, so the job is not due yet"
    );
    for field in ["id", "sourceType", "sourceId", "createdAtEpoch", "updatedAtEpoch"] {
        assert!(!job[field].is_null(), "generationJob.{field}");
    }

    // Stop → start again (200, same session, same prompt is the same turn) …
    let (status, res) = app.post("/v1/sessions/start", tok, &start).await;
    assert_eq!(status, 200);
    assert_eq!(res["session"]["id"], session_id.as_str());
    assert_eq!(res["session"]["promptCount"], 1);
    // … assistant_message with wait=true, which always includes generationJob …
    let msg = json!({
        "projectId": app.project_id, "contentSessionId": "cc-1", "sourceType": "hook",
        "eventType": "assistant_message", "occurredAtEpoch": 1_763_700_001_000_i64,
        "payload": {"last_assistant_message": "Rate limiting added."}
    });
    let (status, res) = app.post("/v1/events?wait=true", tok, &msg).await;
    assert_eq!(status, 201);
    assert!(res.as_object().unwrap().contains_key("generationJob"));
    assert_eq!(res["generationJob"]["jobType"], "turn_summary");
    // … then end, which is idempotent for the turn.
    let (status, end1) = app
        .post(&format!("/v1/sessions/{session_id}/end"), tok, &json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(end1["session"]["status"], "ended");
    let (_, end2) = app
        .post(&format!("/v1/sessions/{session_id}/end"), tok, &json!({}))
        .await;
    assert_eq!(end1["generationJob"]["id"], end2["generationJob"]["id"]);
    assert_eq!(end1["generationJob"]["jobType"], "turn_summary");

    // A second turn: a new prompt reopens the session and gets its own summary.
    let mut next = start.clone();
    next["metadata"]["prompt"] = json!("now add tests");
    let (status, res) = app.post("/v1/sessions/start", tok, &next).await;
    assert_eq!((status, res["session"]["promptCount"].as_i64()), (200, Some(2)));
    assert_eq!(res["session"]["status"], "active");
    let (_, end3) = app
        .post(&format!("/v1/sessions/{session_id}/end"), tok, &json!({}))
        .await;
    assert_ne!(end3["generationJob"]["id"], end1["generationJob"]["id"]);

    // Read back: session, event, jobs.
    let (status, res) = app.get(&format!("/v1/sessions/{session_id}"), tok).await;
    assert_eq!(
        (status, res["session"]["id"].as_str()),
        (200, Some(session_id.as_str()))
    );
    let event_id = event["id"].as_str().unwrap();
    let (status, res) = app.get(&format!("/v1/events/{event_id}"), tok).await;
    assert_eq!(
        (status, res["event"]["payload"]["tool_name"].as_str()),
        (200, Some("Edit"))
    );
    let (status, res) = app.get(&format!("/v1/events/{event_id}/observations"), tok).await;
    assert_eq!(
        (status, res["observations"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let job_id = job["id"].as_str().unwrap();
    let (status, res) = app.get(&format!("/v1/jobs/{job_id}"), tok).await;
    assert_eq!(status, 200);
    let full = &res["generationJob"];
    assert_eq!(full["jobType"], "observations");
    assert_eq!(full["agentEventId"], event_id);
    for field in [
        "projectId",
        "teamId",
        "attempts",
        "maxAttempts",
        "serverSessionId",
    ] {
        assert!(!full[field].is_null(), "generationJob.{field}");
    }
    let (status, res) = app.get("/v1/jobs?limit=2", tok).await;
    assert_eq!(status, 200);
    // Turn 1: observations and one summary (assistant_message and end share it); turn 2: its summary.
    assert_eq!(res["total"], 3);
    assert_eq!(res["jobs"].as_array().unwrap().len(), 2);
    let (_, res) = app.get("/v1/jobs?status=queued&limit=200", tok).await;
    assert_eq!(res["total"], 3);
}

#[tokio::test]
async fn operators_cancel_and_retry_jobs_through_the_state_machine() {
    let app = spawn_app().await;
    let tok = Some(app.ingest_token.as_str());
    let admin = Some(app.admin_token.as_str());
    let ev = json!({"projectId": app.project_id, "sourceType": "api", "eventType": "note",
                    "occurredAtEpoch": 1_763_700_000_000_i64, "payload": {"text": "x"}});
    let (_, res) = app.post("/v1/events", tok, &ev).await;
    let job = res["generationJob"]["id"].as_str().unwrap().to_string();

    let (status, res) = app
        .post(&format!("/v1/jobs/{job}/retry"), admin, &json!({}))
        .await;
    assert_eq!((status, res["alreadyQueued"].as_bool()), (200, Some(true)));
    let (status, res) = app
        .post(&format!("/v1/jobs/{job}/cancel"), admin, &json!({}))
        .await;
    assert_eq!((status, res["alreadyCancelled"].as_bool()), (200, Some(false)));
    assert_eq!(res["generationJob"]["status"], "cancelled");
    assert!(res["generationJob"]["cancelledAtEpoch"].is_i64());
    let (_, res) = app
        .post(&format!("/v1/jobs/{job}/cancel"), admin, &json!({}))
        .await;
    assert_eq!(res["alreadyCancelled"], true);
    let (status, res) = app
        .post(&format!("/v1/jobs/{job}/retry"), admin, &json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            res["retriedCount"].as_i64(),
            res["generationJob"]["status"].as_str()
        ),
        (Some(1), Some("queued"))
    );

    // Completed jobs refuse both with 409.
    sqlx::query("UPDATE generation_jobs SET status = 'completed', completed_at = now() WHERE id = $1::uuid")
        .bind(&job)
        .execute(&app.pool)
        .await
        .unwrap();
    for action in ["retry", "cancel"] {
        let (status, res) = app
            .post(&format!("/v1/jobs/{job}/{action}"), admin, &json!({}))
            .await;
        assert_eq!(
            (status, res["error"]["code"].as_str()),
            (409, Some("invalid_job_state")),
            "{action}"
        );
    }
    // Each transition is in the job's event log and the audit log.
    assert_eq!(app.count("SELECT count(*) FROM generation_job_events").await, 2);
    assert_eq!(
        app.count("SELECT count(*) FROM audit_log WHERE action IN ('job.cancel', 'job.retry')")
            .await,
        2
    );
    // Ingest tokens cannot operate jobs.
    let (status, _) = app.post(&format!("/v1/jobs/{job}/cancel"), tok, &json!({})).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn batches_memories_purge_info_and_health() {
    let app = spawn_app().await;
    let tok = Some(app.ingest_token.as_str());
    let events: Vec<_> = (0..3)
        .map(|i| {
            json!({"projectId": "default", "sourceType": "hook", "eventType": "tool_use",
                   "occurredAtEpoch": 1_763_700_000_000_i64 + i, "contentSessionId": "b-1",
                   "sourceEventId": format!("e{i}"), "payload": {"tool_name": "Read"}})
        })
        .collect();
    let (status, res) = app
        .post("/v1/events/batch", tok, &json!({"events": events}))
        .await;
    assert_eq!(status, 201, "{res}");
    assert_eq!(res["events"].as_array().unwrap().len(), 3);
    // Replaying the batch stores nothing new.
    let (status, _) = app
        .post("/v1/events/batch", tok, &json!({"events": events}))
        .await;
    assert_eq!(status, 201);
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 3);
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs").await,
        1,
        "one turn, one job"
    );

    let (status, res) = app
        .post(
            "/v1/memories",
            tok,
            &json!({"projectId": app.project_id, "content": "Use pnpm, not npm"}),
        )
        .await;
    assert_eq!(status, 201);
    let memory = res["memory"]["id"].as_str().unwrap().to_string();
    assert_eq!(res["memory"]["kind"], "note");
    let (status, _) = app.delete(&format!("/v1/memories/{memory}"), tok).await;
    assert_eq!(status, 200);
    let (status, _) = app.delete(&format!("/v1/memories/{memory}"), tok).await;
    assert_eq!(status, 404);

    let (status, res) = app.get("/v1/info", tok).await;
    assert_eq!(status, 200);
    assert_eq!(
        (res["runtime"].as_str(), res["queue"]["queued"].as_i64()),
        (Some("cairn"), Some(1))
    );
    let (status, res) = app.get("/api/health", None).await;
    assert_eq!(
        (status, res["postgres"].as_str(), res["redis"].as_str()),
        (200, Some("ok"), Some("ok"))
    );
    let (status, _) = app.get("/api/readiness", None).await;
    assert_eq!(status, 200);
    let (status, res) = app.get("/healthz", None).await;
    assert_eq!((status, res["status"].as_str()), (200, Some("ok")));

    let (status, _) = app
        .delete(&format!("/v1/projects/{}/memory", app.project_id), tok)
        .await;
    assert_eq!(status, 403, "purging needs admin");
    let (status, res) = app
        .delete(
            &format!("/v1/projects/{}/memory", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            res["events"].as_i64(),
            res["jobs"].as_i64(),
            res["sessions"].as_i64()
        ),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 0);
}
