//! One LLM call per turn, through the real API, the real generator and an
//! OpenAI-compatible provider (wiremock): the turn's last observation job
//! asks for the observations and the summary together and writes both; the
//! turn_summary job makes no call; an answer without a summary still gives
//! the turn one (the heuristic's); a session summary is made from its
//! turns' summaries, not from the events again.

use cairn_generator::prompt::system_compact;
use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{body_string_contains, method, path},
};

use super::support::{MINUTE, post_turn, start, wait_count};

const OBSERVATION: &str = "<observation><type>bugfix</type>\
<title>Parser panicked on empty input</title><subtitle>src/parser.rs</subtitle>\
<facts><fact>cargo test failed on parser::empty with index out of bounds</fact></facts>\
<narrative>The parser indexed the first byte without checking length.</narrative>\
<concepts><concept>problem-solution</concept></concepts>\
<files_read><file>src/parser.rs</file></files_read><files_modified><file>src/parser.rs</file></files_modified>\
</observation>";

const SUMMARY: &str = "<summary><request>fix the parser panic</request><investigated>src/parser.rs</investigated>\
<learned>empty input was not guarded</learned><completed>added a guard in src/parser.rs</completed>\
<next_steps>fuzz the parser</next_steps><notes></notes></summary>";

const SESSION_SUMMARY: &str = "<summary><request>parser work</request><investigated></investigated>\
<learned>the session learned things</learned><completed>two fixes</completed><next_steps></next_steps>\
<notes></notes></summary>";

fn answer(content: &str, prompt_tokens: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "cmpl-1", "object": "chat.completion", "model": "qwen-test",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content },
                      "finish_reason": "stop" }],
        "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": 100, "total_tokens": prompt_tokens + 100 }
    }))
}

/// A provider answering every call with `content`.
async fn provider(content: &str) -> MockServer {
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(answer(content, 700))
        .mount(&mock)
        .await;
    mock
}

fn openai(mock: &MockServer) -> [(&'static str, String); 3] {
    [
        ("CAIRN_PROVIDER", "openai".into()),
        ("CAIRN_OPENAI_BASE_URL", format!("{}/v1", mock.uri())),
        ("CAIRN_OPENAI_MODEL", "qwen-test".into()),
    ]
}

/// Runs a generator against `mock` until `want` jobs are completed.
async fn generate(app: &TestApp, mock: &MockServer, want: i64) {
    let env = openai(mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let generator = start(app, &env);
    let done = format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    );
    wait_count(&app.pool, &done, want, MINUTE).await;
    generator.stop().await;
}

async fn requests(mock: &MockServer) -> Vec<Value> {
    mock.received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// (id, type, summary_by, usage) of the app's jobs, oldest first.
async fn jobs(app: &TestApp) -> Vec<(Uuid, String, Option<Uuid>, Option<Value>)> {
    sqlx::query_as(
        "SELECT id, job_type, summary_by, usage FROM generation_jobs WHERE project_id = $1 ORDER BY created_at, id",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn one_call_writes_the_turns_observations_and_summary() {
    let app = spawn_app().await;
    let mock = provider(&format!("{OBSERVATION}\n{SUMMARY}")).await;
    post_turn(&app, "economy", "fix the parser panic").await;
    generate(&app, &mock, 2).await;

    let sent = requests(&mock).await;
    assert_eq!(sent.len(), 1, "one call for the turn: {sent:?}");
    assert_eq!(sent[0]["messages"][0]["content"], system_compact::COMBINED);
    let user = sent[0]["messages"][1]["content"].as_str().unwrap();
    for needle in [
        "Job: observations and summary of one agent turn",
        "## User prompt\nfix the parser panic",
        "Bash: cargo test [failed]\ntest parser::empty ... FAILED: index out of bounds",
        "Edit src/parser.rs\n- a\n+ b",
        "## Last assistant message\nFixed the empty-input panic in the parser.",
    ] {
        assert!(user.contains(needle), "{needle:?} missing from\n{user}");
    }

    let jobs = jobs(&app).await;
    let (obs, turn) = (&jobs[0], &jobs[1]);
    assert_eq!(
        (obs.1.as_str(), turn.1.as_str()),
        ("observations", "turn_summary")
    );
    assert_eq!(turn.2, Some(obs.0), "the observation job took the turn's summary");
    assert_eq!(obs.3.as_ref().unwrap()["input_tokens"], 700);
    assert_eq!(
        turn.3, None,
        "the turn_summary job made no call and stored no usage"
    );
    let (job_id, scope, turn_number, request, provider): (Uuid, String, Option<i32>, String, String) =
        sqlx::query_as(
            "SELECT job_id, scope, prompt_number, request, provider FROM summaries WHERE project_id = $1",
        )
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        (
            job_id,
            scope.as_str(),
            turn_number,
            request.as_str(),
            provider.as_str()
        ),
        (obs.0, "turn", Some(1), "fix the parser panic", "openai")
    );
    let titles: Vec<String> = sqlx::query_scalar("SELECT title FROM observations WHERE job_id = $1")
        .bind(obs.0)
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert_eq!(titles, ["Parser panicked on empty input"]);
}

/// With a generator already running, each turn's jobs are woken as its
/// Stop commits, in whatever order the hints arrive: the summary is still
/// written by the turn's observation job, in the turn's one call.
#[tokio::test]
async fn a_running_generator_makes_one_call_a_turn_whichever_job_is_woken_first() {
    let app = spawn_app().await;
    let mock = provider(&format!("{OBSERVATION}\n{SUMMARY}")).await;
    let env = openai(&mock);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("CAIRN_WORKERS", "1"));
    let generator = start(&app, &env);
    const TURNS: i64 = 6;
    let done = format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    );
    for turn in 1..=TURNS {
        post_turn(&app, "economy-live", &format!("turn {turn}")).await;
        wait_count(&app.pool, &done, 2 * turn, MINUTE).await;
    }
    generator.stop().await;

    assert_eq!(requests(&mock).await.len() as i64, TURNS, "one call a turn");
    let taken: Vec<(i32, Option<Uuid>, Option<Uuid>)> = sqlx::query_as(
        "SELECT t.prompt_number, t.summary_by, o.id FROM generation_jobs t
         LEFT JOIN generation_jobs o ON o.session_id = t.session_id AND o.prompt_number = t.prompt_number
                                    AND o.job_type = 'observations'
         WHERE t.project_id = $1 AND t.job_type = 'turn_summary' ORDER BY t.prompt_number",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(taken.len() as i64, TURNS);
    for (turn, by, observations) in taken {
        assert!(observations.is_some(), "turn {turn} has an observation job");
        assert_eq!(
            by, observations,
            "turn {turn}: the observation job wrote the summary"
        );
    }
}

#[tokio::test]
async fn a_combined_answer_without_a_summary_still_gives_the_turn_one() {
    let app = spawn_app().await;
    let mock = provider(OBSERVATION).await;
    post_turn(&app, "economy", "fix the parser panic").await;
    generate(&app, &mock, 2).await;

    assert_eq!(requests(&mock).await.len(), 1);
    let (scope, completed, provider): (String, String, String) =
        sqlx::query_as("SELECT scope, completed, provider FROM summaries WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!((scope.as_str(), provider.as_str()), ("turn", "heuristic"));
    assert!(
        completed.contains("Fixed the empty-input panic in the parser."),
        "{completed}"
    );
    let observations: i64 =
        sqlx::query_scalar("SELECT count(*) FROM observations WHERE project_id = $1 AND provider = 'openai'")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(observations, 1);
}

#[tokio::test]
async fn the_session_summary_is_made_from_the_turn_summaries() {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("Job: summary of a whole session"))
        .respond_with(answer(SESSION_SUMMARY, 300))
        .with_priority(1)
        .mount(&mock)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(answer(&format!("{OBSERVATION}\n{SUMMARY}"), 700))
        .mount(&mock)
        .await;
    post_turn(&app, "economy", "fix the parser panic").await;
    post_turn(&app, "economy", "now the lexer").await;
    let (status, res) = app
        .hook(cc("economy", "SessionEnd", json!({ "reason": "exit" })))
        .await;
    assert_eq!(status, 200, "{res}");
    // Two observation jobs, two turn_summary jobs, one session summary.
    generate(&app, &mock, 5).await;

    let sent = requests(&mock).await;
    assert_eq!(sent.len(), 3, "one call per turn and one for the session");
    let session: Vec<&str> = sent
        .iter()
        .filter_map(|r| r["messages"][1]["content"].as_str())
        .filter(|u| u.starts_with("Job: summary of a whole session"))
        .collect();
    assert_eq!(session.len(), 1);
    let user = session[0];
    for turn in [1, 2] {
        assert!(
            user.contains(&format!(
                "### Turn {turn} (its summary)\nrequest: fix the parser panic\n"
            )),
            "turn {turn}: {user}"
        );
    }
    assert!(user.contains("learned: empty input was not guarded"), "{user}");
    assert!(
        !user.contains("tools: "),
        "no event digest when a turn has its summary: {user}"
    );
    let sessions: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM summaries WHERE project_id = $1 AND scope = 'session' AND learned = 'the session learned things'",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(sessions, 1);
}

#[tokio::test]
async fn a_turn_whose_combined_call_fails_for_good_keeps_the_heuristics_summary() {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": { "message": "bad request", "type": "invalid_request_error" }
        })))
        .mount(&mock)
        .await;
    post_turn(&app, "economy", "fix the parser panic").await;
    let env = openai(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let generator = start(&app, &env);
    let settled = format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status IN ('completed', 'failed')",
        app.project_id
    );
    wait_count(&app.pool, &settled, 2, MINUTE).await;
    generator.stop().await;

    let statuses: Vec<(String, String)> = sqlx::query_as(
        "SELECT job_type, status FROM generation_jobs WHERE project_id = $1 ORDER BY job_type",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        statuses,
        [
            ("observations".to_string(), "failed".to_string()),
            ("turn_summary".to_string(), "completed".to_string())
        ]
    );
    assert_eq!(requests(&mock).await.len(), 1, "a 400 is not retried");
    let (scope, completed, provider): (String, String, String) =
        sqlx::query_as("SELECT scope, completed, provider FROM summaries WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!((scope.as_str(), provider.as_str()), ("turn", "heuristic"));
    assert!(
        completed.contains("Fixed the empty-input panic in the parser."),
        "{completed}"
    );
}
