//! Daily token budgets, through the real generator and an OpenAI-compatible
//! provider (wiremock): under 80 % the provider answers (one call for the
//! turn's observations and summary); at 85 % the turn summary is the
//! heuristic's and the model is asked for the observations only; at 100 %
//! the provider is never called and the job row says why. The turn_summary
//! job makes no call: the turn's observation job writes the summary.

use cairn_testkit::{TestApp, spawn_app};
use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use super::support::{MINUTE, post_turn, start, wait_count};

const BUDGET: i64 = 100_000;

const MODEL_XML: &str = "<observation><type>bugfix</type>\
<title>Parser panicked on empty input</title><subtitle>Index out of bounds</subtitle>\
<facts><fact>cargo test failed on parser::empty</fact></facts>\
<narrative>The parser indexed the first byte without checking length.</narrative>\
<concepts><concept>problem-solution</concept></concepts>\
<files_read><file>src/parser.rs</file></files_read><files_modified><file>src/parser.rs</file></files_modified>\
</observation>\n<summary><request>fix the parser panic</request><investigated>src/parser.rs</investigated>\
<learned>empty input was not guarded</learned><completed>added a guard</completed>\
<next_steps>fuzz the parser</next_steps><notes></notes></summary>";

/// Sets the project's budget and records `used` model tokens today, as a
/// completed job with that usage (counted by the usage trigger).
async fn seed(app: &TestApp, used: i64) {
    sqlx::query("UPDATE projects SET llm_daily_token_budget = $2 WHERE id = $1")
        .bind(app.project_id)
        .bind(BUDGET)
        .execute(&app.pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, status, completed_at,
             idempotency_key, usage)
         VALUES (gen_random_uuid(), $1, $2, 'session_summary', 'session', 'completed', now(), 'seed-usage', $3)",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(json!({ "provider": "openai", "model": "m", "input_tokens": used - 1000, "output_tokens": 1000 }))
    .execute(&app.pool)
    .await
    .unwrap();
    let today: i64 = sqlx::query_scalar("SELECT project_used FROM llm_budget_today WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(today, used);
}

/// A mock OpenAI-compatible server expecting exactly `calls` requests.
async fn provider(calls: u64) -> MockServer {
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "cmpl-1", "object": "chat.completion", "model": "qwen-test",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": MODEL_XML },
                          "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 900, "completion_tokens": 150, "total_tokens": 1050 }
        })))
        .expect(calls)
        .mount(&mock)
        .await;
    mock
}

/// Posts one turn (an observation job with a failed test run, and a turn
/// summary), runs the generator until both are completed, and returns each
/// job's (type, provider of its rows, budget_state, budget_detail).
async fn run_turn(app: &TestApp, mock: &MockServer) -> Vec<JobRow> {
    post_turn(app, "budget", "fix the parser panic").await;
    let base = format!("{}/v1", mock.uri());
    let generator = start(
        app,
        &[
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_OPENAI_BASE_URL", &base),
            ("CAIRN_OPENAI_MODEL", "qwen-test"),
        ],
    );
    let done = format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'
           AND idempotency_key <> 'seed-usage' AND job_type IN ('observations', 'turn_summary')",
        app.project_id
    );
    wait_count(&app.pool, &done, 2, MINUTE).await;
    generator.stop().await;
    sqlx::query_as(
        "SELECT j.job_type,
                coalesce((SELECT min(o.provider) FROM observations o WHERE o.job_id = j.id),
                         (SELECT min(s.provider) FROM summaries s WHERE s.job_id = j.id), 'none'),
                j.budget_state, j.budget_detail
         FROM generation_jobs j
         WHERE j.project_id = $1 AND j.job_type IN ('observations', 'turn_summary')
           AND j.idempotency_key <> 'seed-usage'
         ORDER BY j.job_type",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

/// The provider of the turn's summary row.
async fn turn_summary_by(app: &TestApp) -> String {
    sqlx::query_scalar("SELECT provider FROM summaries WHERE project_id = $1 AND scope = 'turn'")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

type JobRow = (String, String, Option<String>, Option<Value>);

fn by_type(jobs: &[JobRow], job_type: &str) -> JobRow {
    jobs.iter().find(|j| j.0 == job_type).cloned().unwrap()
}

/// The turn_summary job made no call: no rows of its own, no budget decision.
fn no_call(jobs: &[JobRow]) {
    let (_, made_by, state, detail) = by_type(jobs, "turn_summary");
    assert_eq!(
        (made_by.as_str(), state, detail),
        ("none", None, None),
        "{jobs:?}"
    );
}

#[tokio::test]
async fn under_80_percent_the_provider_answers() {
    let app = spawn_app().await;
    seed(&app, 50_000).await;
    // One call for the turn: its observations and its summary together.
    let mock = provider(1).await;
    let jobs = run_turn(&app, &mock).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    let (_, made_by, state, detail) = by_type(&jobs, "observations");
    assert_eq!(made_by, "openai", "{jobs:?}");
    assert_eq!(state.as_deref(), Some("ok"), "{jobs:?}");
    assert_eq!(detail.as_ref().unwrap()["action"], "provider", "{jobs:?}");
    assert_eq!(turn_summary_by(&app).await, "openai");
    no_call(&jobs);
    mock.verify().await;
    // The call is counted: 1050 tokens on top of the seeded 50 000.
    let used: i64 = sqlx::query_scalar("SELECT project_used FROM llm_budget_today WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(used, 50_000 + 1050);
}

#[tokio::test]
async fn at_85_percent_the_turn_summary_is_the_heuristics() {
    let app = spawn_app().await;
    seed(&app, 85_000).await;
    // Only the observations (its turn had a failing test run) reach the model.
    let mock = provider(1).await;
    let jobs = run_turn(&app, &mock).await;
    assert_eq!(turn_summary_by(&app).await, "heuristic", "{jobs:?}");
    let (_, made_by, state, _) = by_type(&jobs, "observations");
    assert_eq!(made_by, "openai", "{jobs:?}");
    assert_eq!(state.as_deref(), Some("degraded"));
    no_call(&jobs);
    mock.verify().await;
    let sent = &mock.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("Job: observations for one agent turn\n"),
        "{user}"
    );
}

#[tokio::test]
async fn at_100_percent_no_provider_call_is_made() {
    let app = spawn_app().await;
    seed(&app, BUDGET).await;
    let mock = provider(0).await;
    let jobs = run_turn(&app, &mock).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    let (_, made_by, state, detail) = by_type(&jobs, "observations");
    assert_eq!(made_by, "heuristic", "{jobs:?}");
    assert_eq!(state.as_deref(), Some("exhausted"), "{jobs:?}");
    let detail = detail.as_ref().unwrap();
    assert_eq!(detail["action"], "heuristic", "{detail}");
    assert_eq!(detail["reason"], "daily token budget exhausted", "{detail}");
    assert_eq!(detail["projectBudget"], BUDGET, "{detail}");
    assert_eq!(turn_summary_by(&app).await, "heuristic");
    no_call(&jobs);
    mock.verify().await;
    assert!(mock.received_requests().await.unwrap().is_empty());
    // The heuristic spends no model tokens: usage stays where it was.
    let (used, heuristic): (i64, i64) = sqlx::query_as(
        "SELECT sum(input_tokens + output_tokens)::bigint, sum(heuristic_calls)::bigint FROM llm_usage_daily
         WHERE project_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!((used, heuristic), (BUDGET, 1));
}

#[tokio::test]
async fn a_team_budget_counts_too() {
    let app = spawn_app().await;
    seed(&app, 10_000).await;
    sqlx::query("UPDATE teams SET llm_daily_token_budget = 10000 WHERE id = $1")
        .bind(app.team_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let mock = provider(0).await;
    let jobs = run_turn(&app, &mock).await;
    let (_, made_by, state, _) = by_type(&jobs, "observations");
    assert_eq!(
        (made_by.as_str(), state.as_deref()),
        ("heuristic", Some("exhausted")),
        "{jobs:?}"
    );
    assert_eq!(turn_summary_by(&app).await, "heuristic");
    no_call(&jobs);
    mock.verify().await;
}
