//! Each provider error class ends in its state through the real generator:
//! a retry with a later `next_attempt_at`, or failed with `last_error`.

use std::time::{Duration, Instant};

use cairn_testkit::{TestApp, spawn_app};
use chrono::{DateTime, Utc};
use serde_json::json;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use super::support::{MINUTE, post_turn, start};

#[derive(Debug)]
struct Settled {
    status: String,
    attempts: i32,
    last_error: String,
    /// Seconds from now until the next attempt.
    due_in: f64,
}

/// Posts a turn, runs a generator whose Anthropic endpoint answers `response`,
/// and waits until the observation job has settled after `attempts` attempts.
async fn settle(response: ResponseTemplate, attempts: i32, extra: &[(&str, &str)]) -> (TestApp, Settled) {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(response)
        .mount(&mock)
        .await;
    post_turn(&app, "errs", "prompt").await;
    let uri = mock.uri();
    let mut env = vec![
        ("CAIRN_PROVIDER", "anthropic"),
        ("CAIRN_ANTHROPIC_API_KEY", "sk-test"),
        ("CAIRN_ANTHROPIC_BASE_URL", uri.as_str()),
        ("CAIRN_RETRY_BASE_MS", "60000"),
    ];
    env.extend_from_slice(extra);
    let generator = start(&app, &env);
    let deadline = Instant::now() + MINUTE;
    let settled = loop {
        let row: (String, i32, Option<String>, DateTime<Utc>) = sqlx::query_as(
            "SELECT status, attempts, last_error, next_attempt_at FROM generation_jobs
             WHERE project_id = $1 AND job_type = 'observations'",
        )
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
        if row.0 != "processing" && row.1 >= attempts {
            break Settled {
                status: row.0,
                attempts: row.1,
                last_error: row.2.unwrap_or_default(),
                due_in: (row.3 - Utc::now()).num_milliseconds() as f64 / 1000.0,
            };
        }
        assert!(Instant::now() < deadline, "job did not settle: {row:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    generator.stop().await;
    (app, settled)
}

fn anthropic_error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "type": "error", "error": { "type": kind, "message": message }
    }))
}

#[tokio::test]
async fn rate_limit_429_waits_for_retry_after() {
    let response = anthropic_error(429, "rate_limit_error", "slow down").insert_header("retry-after", "120");
    let (_app, s) = settle(response, 1, &[]).await;
    assert_eq!(s.status, "queued", "{s:?}");
    assert!(s.last_error.starts_with("rate_limit"), "{s:?}");
    assert!(s.due_in > 110.0, "Retry-After is honoured: {s:?}");
}

#[tokio::test]
async fn overloaded_529_is_retried_later() {
    let (_app, s) = settle(anthropic_error(529, "overloaded_error", "Overloaded"), 1, &[]).await;
    assert_eq!(s.status, "queued", "{s:?}");
    assert!(s.last_error.starts_with("transient"), "{s:?}");
    assert!(s.due_in > 40.0, "backoff from a 60 s base with jitter: {s:?}");
}

#[tokio::test]
async fn a_timeout_is_transient() {
    let response = ResponseTemplate::new(200).set_delay(Duration::from_secs(5));
    let (_app, s) = settle(response, 1, &[("CAIRN_PROVIDER_TIMEOUT_MS", "300")]).await;
    assert_eq!(s.status, "queued", "{s:?}");
    assert!(s.last_error.starts_with("transient"), "{s:?}");
    assert!(s.due_in > 40.0, "{s:?}");
}

#[tokio::test]
async fn quota_exhaustion_waits_much_longer() {
    let response = anthropic_error(
        400,
        "invalid_request_error",
        "Your credit balance is too low to access the API",
    );
    let (_app, s) = settle(response, 1, &[("CAIRN_RETRY_QUOTA_MS", "900000")]).await;
    assert_eq!(s.status, "queued", "{s:?}");
    assert!(s.last_error.starts_with("quota"), "{s:?}");
    assert!(s.due_in > 600.0, "{s:?}");
}

#[tokio::test]
async fn auth_errors_fail_at_once() {
    let (_app, s) = settle(
        anthropic_error(401, "authentication_error", "invalid x-api-key"),
        1,
        &[],
    )
    .await;
    assert_eq!((s.status.as_str(), s.attempts), ("failed", 1), "{s:?}");
    assert!(s.last_error.starts_with("auth"), "{s:?}");
    assert!(
        !s.last_error.contains("sk-test"),
        "the key never reaches an error: {s:?}"
    );
}

#[tokio::test]
async fn a_bad_request_is_unrecoverable() {
    let (_app, s) = settle(
        anthropic_error(400, "invalid_request_error", "max_tokens: too large"),
        1,
        &[],
    )
    .await;
    assert_eq!((s.status.as_str(), s.attempts), ("failed", 1), "{s:?}");
    assert!(s.last_error.starts_with("unrecoverable"), "{s:?}");
}

#[tokio::test]
async fn malformed_output_is_retried_then_fails_as_parse_error() {
    let response = ResponseTemplate::new(200).set_body_json(json!({
        "id": "m", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
        "content": [{ "type": "text", "text": "I'd rather not answer in XML <observation><title>" }],
        "usage": { "input_tokens": 10, "output_tokens": 5 }
    }));
    let (app, s) = settle(
        response,
        5,
        &[("CAIRN_RETRY_BASE_MS", "50"), ("CAIRN_RETRY_MAX_MS", "200")],
    )
    .await;
    assert_eq!((s.status.as_str(), s.attempts), ("failed", 5), "{s:?}");
    assert!(s.last_error.starts_with("parse_error"), "{s:?}");
    let retries = app
        .count(&format!(
            "SELECT count(*) FROM generation_job_events e JOIN generation_jobs j ON j.id = e.job_id
             WHERE j.project_id = '{}' AND j.job_type = 'observations'
               AND e.from_status = 'processing' AND e.to_status = 'queued'",
            app.project_id
        ))
        .await;
    assert_eq!(retries, 4, "four retries, then failed");
}

#[tokio::test]
async fn garbage_bodies_never_break_the_worker() {
    let response = ResponseTemplate::new(200).set_body_string("<html>502 Bad Gateway</html>");
    let (_app, s) = settle(response, 1, &[]).await;
    assert_eq!(s.status, "queued", "{s:?}");
    assert!(s.last_error.starts_with("parse_error"), "{s:?}");
}
