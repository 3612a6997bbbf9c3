//! Ask: a question answered from the project's memories. Offline, the best
//! memories themselves; with a model (an OpenAI-compatible server here), its
//! answer with only the citations that name memories it was given — never
//! another project's — and its tokens counted against the project's day; a
//! failing, slow or spent model falls back to the memories; bad questions
//! are 422 with a code; the MCP tool `ask` answers through the SDK client.

use cairn_testkit::{Options, spawn_app_with};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use crate::helpers::*;

async fn remember(app: &TestApp, project_id: Uuid, title: &str, fact: &str) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, facts)
         SELECT $1, team_id, id, 'test:' || $1, 'bugfix', $3, ARRAY[$4] FROM projects WHERE id = $2",
    )
    .bind(id)
    .bind(project_id)
    .bind(title)
    .bind(fact)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn ask(app: &TestApp, body: Value) -> (u16, Value) {
    app.post("/v1/ask", Some(&app.ingest_token), &body).await
}

/// An app whose asks go to an OpenAI-compatible server answering `response`.
async fn with_model(response: ResponseTemplate, extra: &[(&'static str, &str)]) -> (TestApp, MockServer) {
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&mock)
        .await;
    let mut env = vec![
        ("CAIRN_PROVIDER", "openai".into()),
        ("CAIRN_OPENAI_BASE_URL", format!("{}/v1", mock.uri())),
        ("CAIRN_OPENAI_MODEL", "ask-test".into()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    let options = Options {
        extra: env,
        ..Options::default()
    };
    (spawn_app_with(options).await, mock)
}

fn completion(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "cmpl-1", "object": "chat.completion", "model": "ask-test",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 420, "completion_tokens": 35, "total_tokens": 455 }
    }))
}

#[tokio::test]
async fn offline_the_answer_is_the_best_memories_of_the_asking_project_only() {
    let app = spawn_app().await;
    let ours = remember(
        &app,
        app.project_id,
        "Nightly build broke on clang",
        "build.rs needs clang 17",
    )
    .await;
    let elsewhere = app.create_project("elsewhere").await;
    // A better match of the question, in another project.
    let theirs = remember(
        &app,
        elsewhere,
        "Why the nightly build broke",
        "the nightly build broke: missing clang",
    )
    .await;

    let (status, answer) = ask(&app, json!({ "question": "why did the nightly build break?" })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["answeredBy"], "memories");
    assert_eq!(answer["known"], true);
    assert!(answer["usage"].is_null(), "{answer}");
    let text = answer["answer"].as_str().unwrap();
    assert!(
        text.contains("build.rs needs clang 17") && text.contains(&ours.to_string()),
        "{text}"
    );
    assert!(!text.contains(&theirs.to_string()), "{text}");
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(cited, vec![ours.to_string()]);

    let (status, unknown) = ask(&app, json!({ "question": "kubernetes ingress certificates" })).await;
    assert_eq!(status, 200, "{unknown}");
    assert_eq!(
        (unknown["known"].as_bool(), unknown["answer"].as_str()),
        (Some(false), Some("Memory does not know."))
    );
    assert_eq!(unknown["citations"], json!([]));

    for (body, what) in [
        (json!({ "question": "  " }), "blank"),
        (json!({ "question": "x".repeat(2001) }), "too long"),
        (json!({ "question": "build", "limit": 0 }), "limit 0"),
    ] {
        let (status, refused) = ask(&app, body).await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (422, Some("invalid_field")),
            "{what}: {refused}"
        );
    }
    let (status, refused) = ask(&app, json!({ "query": "build" })).await;
    assert!((400..500).contains(&status), "{status} {refused}");
    assert!(refused["error"]["code"].is_string(), "{refused}");
}

#[tokio::test]
async fn a_models_answer_keeps_only_citations_of_the_memories_it_was_given() {
    let stranger = Uuid::now_v7();
    // The answer is written before the ids exist: the mock answers with placeholders replaced below.
    let (app, mock) = with_model(completion("placeholder"), &[]).await;
    let ours = remember(
        &app,
        app.project_id,
        "Nightly build broke on clang",
        "build.rs needs clang 17",
    )
    .await;
    let elsewhere = app.create_project("elsewhere").await;
    let theirs = remember(&app, elsewhere, "Nightly build", "other project's nightly build").await;
    mock.reset().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(&format!(
            "The nightly build needs clang 17 [{ours}]. See also [{theirs}] and [{stranger}]."
        )))
        .expect(1)
        .mount(&mock)
        .await;

    let (status, answer) = ask(&app, json!({ "question": "why did the nightly build break?" })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["answeredBy"], "llm");
    assert_eq!(answer["known"], true);
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        cited,
        vec![ours.to_string()],
        "another project's id and a made-up one are dropped"
    );
    assert_eq!(answer["usage"]["inputTokens"], 420);
    assert_eq!(answer["usage"]["outputTokens"], 35);
    let (input, output, calls): (i64, i64, i64) = sqlx::query_as(
        "SELECT sum(input_tokens)::bigint, sum(output_tokens)::bigint, sum(llm_calls)::bigint
         FROM llm_usage_daily WHERE project_id = $1",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        (input, output, calls),
        (420, 35, 1),
        "counted against the project's day"
    );
    // The question and the memory reached the model; the other project's did not.
    let sent = String::from_utf8(mock.received_requests().await.unwrap()[0].body.clone()).unwrap();
    assert!(
        sent.contains("build.rs needs clang 17") && sent.contains(&ours.to_string()),
        "{sent}"
    );
    assert!(!sent.contains(&theirs.to_string()), "{sent}");
}

#[tokio::test]
async fn a_model_that_says_it_does_not_know_is_believed() {
    let (app, _mock) = with_model(completion("Memory does not know."), &[]).await;
    remember(
        &app,
        app.project_id,
        "Parser recursion",
        "the parser is recursive descent",
    )
    .await;
    let (status, answer) = ask(&app, json!({ "question": "what does the parser do?" })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (answer["known"].as_bool(), answer["answeredBy"].as_str()),
        (Some(false), Some("llm"))
    );
    assert_eq!(answer["citations"], json!([]));
}

#[tokio::test]
async fn a_failing_slow_or_spent_model_falls_back_to_the_memories() {
    let cases = [
        (ResponseTemplate::new(500).set_body_string("boom"), "5xx"),
        (
            ResponseTemplate::new(429).insert_header("retry-after", "30"),
            "429",
        ),
        (
            ResponseTemplate::new(200).set_body_string("{not json"),
            "malformed",
        ),
        (
            completion("slow").set_delay(std::time::Duration::from_secs(3)),
            "deadline",
        ),
    ];
    for (response, what) in cases {
        let (app, _mock) = with_model(response, &[("CAIRN_ASK_DEADLINE_MS", "500")]).await;
        let id = remember(
            &app,
            app.project_id,
            "Parser recursion",
            "the parser is recursive descent",
        )
        .await;
        let (status, answer) = ask(&app, json!({ "question": "parser recursion" })).await;
        assert_eq!(status, 200, "{what}: {answer}");
        assert_eq!(answer["answeredBy"], "memories", "{what}: {answer}");
        assert!(
            answer["fallback"].as_str().is_some_and(|f| !f.is_empty()),
            "{what}: {answer}"
        );
        assert!(
            answer["answer"].as_str().unwrap().contains(&id.to_string()),
            "{what}"
        );
        let counted: i64 = sqlx::query_scalar("SELECT count(*) FROM llm_usage_daily")
            .fetch_one(&app.pool)
            .await
            .unwrap();
        assert_eq!(counted, 0, "{what}: no tokens were spent");
    }

    // A spent budget: no call at all.
    let (app, mock) = with_model(completion("never"), &[]).await;
    remember(
        &app,
        app.project_id,
        "Parser recursion",
        "the parser is recursive descent",
    )
    .await;
    let (status, res) = app
        .patch(
            &format!("/v1/admin/projects/{}", app.project_id),
            Some(&app.admin_token),
            &json!({ "llmDailyTokenBudget": 100 }),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    sqlx::query(
        "INSERT INTO llm_usage_daily (project_id, day, team_id, input_tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2, 100)",
    )
    .bind(app.project_id)
    .bind(app.team_id)
    .execute(&app.pool)
    .await
    .unwrap();
    let (status, answer) = ask(&app, json!({ "question": "parser recursion" })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["answeredBy"], "memories");
    assert_eq!(answer["fallback"], "daily token budget exhausted");
    assert!(mock.received_requests().await.unwrap().is_empty());
}
