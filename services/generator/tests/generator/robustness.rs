//! What a misbehaving provider cannot do to a worker: an absurd Retry-After
//! is capped, a U+0000 or half an emoji in the answer is written once (not
//! paid for again and again), and a panic mid-job settles that job while the
//! same worker goes on to the next one. One worker each, so "the next job"
//! is served by the worker that met the trouble.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use cairn_generator::{
    config::GeneratorConfig,
    provider::{Completion, ErrorClass, Provider, ProviderError, Request, Usage},
    worker,
};
use cairn_testkit::{TestApp, spawn_app};
use chrono::{DateTime, Utc};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use super::support::{MINUTE, env_for, post_turn, start};

/// An answer that serves both kinds of job: an observation and a summary.
const ANSWER: &str = "<observation><type>bugfix</type><title>Fixed the parser</title>\
<narrative>Empty input no longer panics.</narrative><facts><fact>parse(\"\") is None</fact></facts>\
</observation><summary><request>Fix the parser</request><completed>Guarded empty input</completed></summary>";

fn anthropic_answer(text: &str) -> serde_json::Value {
    json!({
        "id": "m", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "end_turn",
        "content": [{ "type": "text", "text": text }],
        "usage": { "input_tokens": 10, "output_tokens": 5 }
    })
}

/// One worker on the Anthropic client, pointed at `mock`.
fn anthropic_env(mock: &MockServer) -> Vec<(String, String)> {
    [
        ("CAIRN_PROVIDER", "anthropic"),
        ("CAIRN_ANTHROPIC_API_KEY", "sk-test"),
        ("CAIRN_ANTHROPIC_BASE_URL", mock.uri().as_str()),
        ("CAIRN_WORKERS", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[derive(Debug, sqlx::FromRow)]
struct Job {
    job_type: String,
    status: String,
    attempts: i32,
    last_error: Option<String>,
    next_attempt_at: DateTime<Utc>,
}

async fn jobs(app: &TestApp) -> Vec<Job> {
    sqlx::query_as(
        "SELECT job_type, status, attempts, last_error, next_attempt_at FROM generation_jobs
         WHERE project_id = $1 ORDER BY created_at, id",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

/// Waits until no job is processing and `settled` holds for the jobs.
async fn wait_jobs(app: &TestApp, within: Duration, settled: impl Fn(&[Job]) -> bool) -> Vec<Job> {
    let deadline = Instant::now() + within;
    loop {
        let jobs = jobs(app).await;
        if !jobs.iter().any(|j| j.status == "processing") && settled(&jobs) {
            return jobs;
        }
        assert!(Instant::now() < deadline, "jobs did not settle: {jobs:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn count(jobs: &[Job], status: &str) -> usize {
    jobs.iter().filter(|j| j.status == status).count()
}

#[tokio::test]
async fn an_absurd_retry_after_is_capped_and_the_worker_goes_on() {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "99999999999999")
                .set_body_json(
                    json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
                ),
        )
        .up_to_n_times(1)
        .mount(&mock)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(anthropic_answer(ANSWER)))
        .mount(&mock)
        .await;
    post_turn(&app, "absurd-1", "fix the parser").await;
    post_turn(&app, "absurd-2", "fix the lexer").await;
    let total = jobs(&app).await.len();
    assert!(total >= 4, "{total} jobs");

    let env = anthropic_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let generator = start(&app, &env);
    let jobs = wait_jobs(&app, MINUTE, |jobs| count(jobs, "completed") == total - 1).await;
    generator.stop().await;

    let waiting: Vec<&Job> = jobs.iter().filter(|j| j.status == "queued").collect();
    assert_eq!(waiting.len(), 1, "{jobs:#?}");
    let job = waiting[0];
    assert_eq!(job.attempts, 1, "{job:?}");
    assert!(
        job.last_error
            .as_deref()
            .unwrap_or_default()
            .starts_with("rate_limit"),
        "{job:?}"
    );
    let due_in = (job.next_attempt_at - Utc::now()).num_seconds();
    assert!(
        (50 * 60..=61 * 60).contains(&due_in),
        "retried within the hour the wait is capped at, not in 3 million years: {due_in} s"
    );
}

/// Posts one turn, runs one anthropic worker answering `response`, and
/// returns the settled jobs once all have completed.
async fn completes_once(response: ResponseTemplate) -> (TestApp, Vec<Job>) {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(response)
        .mount(&mock)
        .await;
    post_turn(&app, "nul", "fix the parser").await;
    let total = jobs(&app).await.len();
    let mut env = anthropic_env(&mock);
    // A refused write is retried by lease expiry: make that quick enough to see.
    env.push(("CAIRN_LEASE_MS".into(), "1500".into()));
    env.push(("CAIRN_HEARTBEAT_MS".into(), "300".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let generator = start(&app, &env);
    let settled = wait_jobs(&app, Duration::from_secs(30), |jobs| {
        count(jobs, "completed") == total
    })
    .await;
    generator.stop().await;
    for job in &settled {
        assert_eq!(job.attempts, 1, "written on the first attempt: {settled:#?}");
    }
    (app, settled)
}

#[tokio::test]
async fn u0000_in_the_answer_is_stripped_and_the_job_completes_once() {
    let answer = ANSWER
        .replace("Fixed the", "Fixed\u{0} the")
        .replace("no longer", "no\u{0} longer")
        .replace("Guarded", "\u{0}Guarded");
    let response = ResponseTemplate::new(200).set_body_json(anthropic_answer(&answer));
    let (app, _) = completes_once(response).await;
    let (title, narrative, facts): (String, String, Vec<String>) =
        sqlx::query_as("SELECT title, narrative, facts FROM observations WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(title, "Fixed the parser");
    assert_eq!(narrative, "Empty input no longer panics.");
    assert_eq!(facts, ["parse(\"\") is None"]);
    let completed: String = sqlx::query_scalar("SELECT completed FROM summaries WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(completed, "Guarded empty input");
}

#[tokio::test]
async fn half_an_emoji_in_the_answer_is_read_as_a_replacement_character() {
    // `\ud83d` without its pair: serde_json refuses it in a string.
    let body = anthropic_answer(&ANSWER.replace("Fixed the", "Fixed LONE_SURROGATE the"))
        .to_string()
        .replace("LONE_SURROGATE", "\\ud83d");
    let response = ResponseTemplate::new(200).set_body_raw(body, "application/json");
    let (app, _) = completes_once(response).await;
    let title: String = sqlx::query_scalar("SELECT title FROM observations WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(title, "Fixed \u{fffd} the parser");
}

/// A provider with bugs: its first call panics; its second fails, and its
/// `model()` then panics while the worker records that failure (outside the
/// provider call); every later call answers.
struct Buggy {
    calls: AtomicUsize,
    panic_in_model: AtomicBool,
}

#[async_trait::async_trait]
impl Provider for Buggy {
    fn name(&self) -> &'static str {
        "buggy"
    }

    fn model(&self) -> &str {
        if self.panic_in_model.swap(false, Ordering::SeqCst) {
            panic!("model() bug");
        }
        "buggy-1"
    }

    async fn complete(&self, _request: Request<'_>) -> Result<Completion, ProviderError> {
        match self.calls.fetch_add(1, Ordering::SeqCst) {
            0 => panic!("complete() bug"),
            1 => {
                self.panic_in_model.store(true, Ordering::SeqCst);
                Err(ProviderError::new(ErrorClass::Transient, "try later"))
            }
            _ => Ok(Completion {
                text: ANSWER.into(),
                usage: Usage {
                    provider: "buggy".into(),
                    model: "buggy-1".into(),
                    ..Usage::default()
                },
            }),
        }
    }
}

#[tokio::test]
async fn a_panic_mid_job_fails_that_job_and_the_worker_serves_the_next() {
    let app = spawn_app().await;
    post_turn(&app, "panic-1", "fix the parser").await;
    post_turn(&app, "panic-2", "fix the lexer").await;
    let total = jobs(&app).await.len();
    let config = GeneratorConfig::from_env(&env_for(&app, &[("CAIRN_WORKERS", "1")])).unwrap();
    let provider = Arc::new(Buggy {
        calls: AtomicUsize::new(0),
        panic_in_model: AtomicBool::new(false),
    });
    let shutdown = CancellationToken::new();
    let generator = tokio::spawn(worker::run_with(config, provider.clone(), shutdown.clone()));

    let jobs = wait_jobs(&app, MINUTE, |jobs| {
        count(jobs, "failed") == 2 && count(jobs, "completed") == total - 2
    })
    .await;
    shutdown.cancel();
    generator.await.unwrap().unwrap();
    let errors: Vec<&str> = jobs
        .iter()
        .filter(|j| j.status == "failed")
        .map(|j| j.last_error.as_deref().unwrap_or_default())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("complete() bug"))
            && errors.iter().any(|e| e.contains("model() bug")),
        "each panicked job failed with what its panic said: {errors:?}"
    );
    for job in jobs.iter().filter(|j| j.status == "failed") {
        assert_eq!(job.attempts, 1, "{job:?}");
    }
    // One call per observation job; a turn_summary job whose summary its
    // turn's observation job took makes none.
    let observation_jobs = jobs.iter().filter(|j| j.job_type == "observations").count();
    assert_eq!(
        provider.calls.load(Ordering::SeqCst),
        observation_jobs,
        "one call per turn"
    );
}
