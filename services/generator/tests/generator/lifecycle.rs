//! Worker processes dying and stopping: SIGKILL mid-job (the lease expires,
//! the job is rescued and completes once) and SIGTERM (in-flight jobs finish
//! within the drain deadline, or are released without losing an attempt).

use std::time::Duration;

use cairn_testkit::{TestApp, spawn_app};
use serde_json::json;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use super::support::{MINUTE, SHORT, post_turn, rows, spawn_process, start, wait_count};

/// An OpenAI-compatible endpoint that answers after `delay`.
async fn slow_model(delay: Duration) -> MockServer {
    let mock = MockServer::start().await;
    let xml = "<observation><type>change</type><title>Slow but sure</title></observation>\
               <summary><request>prompt</request><completed>done</completed></summary>";
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({
                    "model": "slow", "choices": [{ "message": { "role": "assistant", "content": xml } }],
                    "usage": { "prompt_tokens": 10, "completion_tokens": 10 }
                }))
                .set_delay(delay),
        )
        .mount(&mock)
        .await;
    mock
}

fn processing_by(app: &TestApp, owner: &str) -> String {
    format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'processing'
           AND locked_by LIKE '{owner}:%'",
        app.project_id
    )
}

fn completed(app: &TestApp) -> String {
    format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    )
}

#[tokio::test]
async fn a_worker_killed_mid_job_is_rescued_and_the_job_completes_once() {
    let app = spawn_app().await;
    let mock = slow_model(Duration::from_secs(120)).await;
    post_turn(&app, "kill", "prompt").await;
    let base = format!("{}/v1", mock.uri());
    let mut doomed = spawn_process(
        &app,
        &[
            ("CAIRN_WORKER_ID", "doomed"),
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_OPENAI_BASE_URL", &base),
            ("CAIRN_OPENAI_MODEL", "slow"),
            ("CAIRN_LEASE_MS", "1500"),
            ("CAIRN_HEARTBEAT_MS", "300"),
        ],
    );
    // The observation job calls the model for the turn's observations and
    // summary; the turn_summary job completes without a call.
    wait_count(&app.pool, &completed(&app), 1, SHORT).await;
    wait_count(&app.pool, &processing_by(&app, "doomed"), 1, SHORT).await;
    // Heartbeats keep the lease past its first term while the provider works.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        app.count(&processing_by(&app, "doomed")).await,
        1,
        "heartbeats extend the lease"
    );

    doomed.signal("KILL");
    doomed.wait_exit(SHORT).await;
    let rescuer = start(&app, &[("CAIRN_WORKER_ID", "rescuer")]);
    wait_count(&app.pool, &completed(&app), 2, MINUTE).await;
    rescuer.stop().await;

    let rescued = app
        .count(&format!(
            "SELECT count(*) FROM generation_job_events WHERE project_id = '{}' AND from_status = 'processing'
               AND to_status = 'queued' AND actor LIKE 'rescuer:%' AND detail->>'previous_owner' LIKE 'doomed:%'",
            app.project_id
        ))
        .await;
    assert_eq!(rescued, 1, "the in-flight job was rescued from the dead worker");
    let completions = app
        .count(&format!(
            "SELECT count(*) FROM generation_job_events WHERE project_id = '{}' AND to_status = 'completed'",
            app.project_id
        ))
        .await;
    assert_eq!(completions, 2, "each job completed once");
    assert_eq!(rows(&app, "observations").await, 1);
    assert_eq!(rows(&app, "summaries").await, 1);
}

#[tokio::test]
async fn sigterm_lets_in_flight_jobs_finish() {
    let app = spawn_app().await;
    let mock = slow_model(Duration::from_millis(1500)).await;
    post_turn(&app, "term", "prompt").await;
    let base = format!("{}/v1", mock.uri());
    let mut generator = spawn_process(
        &app,
        &[
            ("CAIRN_WORKER_ID", "draining"),
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_OPENAI_BASE_URL", &base),
            ("CAIRN_OPENAI_MODEL", "slow"),
            ("CAIRN_DRAIN_TIMEOUT_MS", "20000"),
        ],
    );
    wait_count(&app.pool, &completed(&app), 1, SHORT).await;
    wait_count(&app.pool, &processing_by(&app, "draining"), 1, SHORT).await;
    generator.signal("TERM");
    let status = generator.wait_exit(SHORT).await;
    assert!(status.success(), "{status:?}");
    assert_eq!(
        app.count(&completed(&app)).await,
        2,
        "in-flight jobs finished before exit"
    );
}

#[tokio::test]
async fn sigterm_past_the_deadline_releases_jobs_without_spending_an_attempt() {
    let app = spawn_app().await;
    let mock = slow_model(Duration::from_secs(120)).await;
    post_turn(&app, "term2", "prompt").await;
    let base = format!("{}/v1", mock.uri());
    let mut generator = spawn_process(
        &app,
        &[
            ("CAIRN_WORKER_ID", "stuck"),
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_OPENAI_BASE_URL", &base),
            ("CAIRN_OPENAI_MODEL", "slow"),
            ("CAIRN_DRAIN_TIMEOUT_MS", "500"),
        ],
    );
    wait_count(&app.pool, &completed(&app), 1, SHORT).await;
    wait_count(&app.pool, &processing_by(&app, "stuck"), 1, SHORT).await;
    generator.signal("TERM");
    let status = generator.wait_exit(SHORT).await;
    assert!(status.success(), "{status:?}");
    let released = app
        .count(&format!(
            "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'queued' AND attempts = 0",
            app.project_id
        ))
        .await;
    assert_eq!(
        released, 1,
        "the in-flight job is back in the queue with its attempt returned"
    );
}
