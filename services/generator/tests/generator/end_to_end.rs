//! A posted turn becomes observations and summaries: with the heuristic
//! provider, and with the Anthropic and OpenAI-compatible clients against a
//! local mock server.

use cairn_testkit::{cc, spawn_app};
use futures::StreamExt;
use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use super::support::{MINUTE, SHORT, post_turn, rows, start, wait_count};

fn completed(app: &cairn_testkit::TestApp) -> String {
    format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    )
}

#[tokio::test]
async fn heuristic_turn_becomes_observation_turn_summary_and_session_summary() {
    let app = spawn_app().await;
    let client = redis::Client::open(app.env["CAIRN_REDIS_URL"].as_str()).unwrap();
    let mut live = client.get_async_pubsub().await.unwrap();
    live.subscribe(format!("cairn:live:{}", app.project_id))
        .await
        .unwrap();

    post_turn(&app, "s-heur", "fix the parser panic on empty input").await;
    let generator = start(&app, &[]);
    // The turn's observation job and its summary job.
    wait_count(&app.pool, &completed(&app), 2, MINUTE).await;

    let (kind, provider, files_modified, files_read, facts, heuristic): (
        String,
        String,
        Vec<String>,
        Vec<String>,
        Vec<String>,
        Value,
    ) = sqlx::query_as(
        "SELECT kind, provider, files_modified, files_read, facts, metadata->'heuristic' FROM observations
         WHERE project_id = $1",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(provider, "heuristic");
    assert_eq!(heuristic, json!(true), "heuristic rows are marked as such");
    assert_eq!(
        kind, "bugfix",
        "a failing command that later passed reads as a fix"
    );
    assert_eq!(files_modified, ["src/parser.rs"]);
    assert!(
        files_read.contains(&"src/parser.rs".to_string()),
        "{files_read:?}"
    );
    assert!(facts.iter().any(|f| f.contains("cargo test")), "{facts:?}");

    let (scope, request): (String, String) =
        sqlx::query_as("SELECT scope, request FROM summaries WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(scope, "turn");
    assert!(request.contains("fix the parser panic"), "{request}");

    // Usage is recorded on every completed job that made a call: all but
    // the turn_summary job, whose summary the turn's observation job wrote.
    let unmetered = app
        .count(&format!(
            "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'
               AND NOT (job_type = 'turn_summary' AND summary_by <> id AND usage IS NULL)
               AND (usage->>'provider' IS DISTINCT FROM 'heuristic' OR (usage->>'input_tokens')::int <= 0)",
            app.project_id
        ))
        .await;
    assert_eq!(unmetered, 0);

    // Live notices after commit.
    let mut kinds = vec![];
    let mut stream = live.on_message();
    while kinds.len() < 2 {
        let msg = tokio::time::timeout(SHORT, stream.next())
            .await
            .expect("live notice")
            .unwrap();
        let body: Value = serde_json::from_str(&msg.get_payload::<String>().unwrap()).unwrap();
        // Rows' notices; each finished job's `job.changed` is checked in the API's live tests.
        if body["type"] != "job.changed" {
            kinds.push(body["type"].as_str().unwrap().to_string());
        }
    }
    kinds.sort();
    assert_eq!(kinds, ["observation.created", "summary.created"]);
    drop(stream);

    // SessionEnd: a summary of the whole session.
    let (status, _) = app
        .hook(cc("s-heur", "SessionEnd", json!({ "reason": "logout" })))
        .await;
    assert_eq!(status, 200);
    wait_count(&app.pool, &completed(&app), 3, MINUTE).await;
    let sessions: i64 = app
        .count(&format!(
            "SELECT count(*) FROM summaries WHERE project_id = '{}' AND scope = 'session'",
            app.project_id
        ))
        .await;
    assert_eq!(sessions, 1);
    generator.stop().await;
}

const MODEL_XML: &str = "Here is what I found.\n```xml\n<observation><type>bugfix</type>\
<title>Parser panicked on empty input</title><subtitle>Index out of bounds in parse()</subtitle>\
<facts><fact>cargo test failed on parser::empty</fact><fact>guard added for empty slices</fact></facts>\
<narrative>The parser indexed the first byte without checking length.</narrative>\
<concepts><concept>problem-solution</concept></concepts>\
<files_read><file>src/parser.rs</file></files_read><files_modified><file>src/parser.rs</file></files_modified>\
</observation>\n<summary><request>fix the parser panic</request><investigated>src/parser.rs</investigated>\
<learned>empty input was not guarded</learned><completed>added a guard</completed>\
<next_steps>fuzz the parser</next_steps><notes></notes></summary>\n```";

async fn assert_model_rows(app: &cairn_testkit::TestApp, provider: &str, model: &str) {
    wait_count(&app.pool, &completed(app), 2, MINUTE).await;
    let (title, kind, p, m, facts): (String, String, String, String, Vec<String>) =
        sqlx::query_as("SELECT title, kind, provider, model, facts FROM observations WHERE project_id = $1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(title, "Parser panicked on empty input");
    assert_eq!(kind, "bugfix");
    assert_eq!((p.as_str(), m.as_str()), (provider, model));
    assert_eq!(facts.len(), 2);
    let learned: String = sqlx::query_scalar("SELECT learned FROM summaries WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(learned, "empty input was not guarded");
    assert_eq!(rows(app, "observations").await, 1);
}

#[tokio::test]
async fn anthropic_provider_turn_becomes_rows_with_usage() {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{ "type": "text", "text": MODEL_XML }],
            "stop_reason": "end_turn",
            "usage": { "input_tokens": 1500, "output_tokens": 220,
                       "cache_read_input_tokens": 1200, "cache_creation_input_tokens": 0 }
        })))
        .mount(&mock)
        .await;
    post_turn(&app, "s-anth", "fix the parser panic").await;
    let generator = start(
        &app,
        &[
            ("CAIRN_PROVIDER", "anthropic"),
            ("CAIRN_ANTHROPIC_API_KEY", "sk-test"),
            ("CAIRN_ANTHROPIC_BASE_URL", &mock.uri()),
            ("CAIRN_ANTHROPIC_MODEL", "claude-test"),
        ],
    );
    assert_model_rows(&app, "anthropic", "claude-test").await;
    let (input, cached): (i64, i64) = sqlx::query_as(
        "SELECT (usage->>'input_tokens')::bigint, (usage->>'cached_tokens')::bigint FROM generation_jobs
         WHERE project_id = $1 AND job_type = 'observations'",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        (input, cached),
        (2700, 1200),
        "input tokens include the cached ones"
    );
    generator.stop().await;
}

#[tokio::test]
async fn openai_compatible_provider_turn_becomes_rows() {
    let app = spawn_app().await;
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "cmpl-1", "object": "chat.completion", "model": "qwen-test",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": MODEL_XML },
                          "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 900, "completion_tokens": 150, "total_tokens": 1050 }
        })))
        .mount(&mock)
        .await;
    post_turn(&app, "s-oai", "fix the parser panic").await;
    let base = format!("{}/v1", mock.uri());
    let generator = start(
        &app,
        &[
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_OPENAI_BASE_URL", &base),
            ("CAIRN_OPENAI_MODEL", "qwen-test"),
        ],
    );
    assert_model_rows(&app, "openai", "qwen-test").await;
    generator.stop().await;
}
