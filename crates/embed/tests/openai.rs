//! The OpenAI-compatible provider against a local mock server: the request
//! it sends, answers in any index order, retries on 429/5xx/timeouts (and
//! only so many), and refusal of malformed or mis-sized answers.

use std::time::Duration;

use cairn_embed::{DIMS, EmbedConfig, Embedder, Provider};
use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, Request, ResponseTemplate,
    matchers::{body_partial_json, header, method, path},
};

fn config(server: &MockServer, timeout_ms: u64) -> EmbedConfig {
    let mut c = EmbedConfig::from_lookup(|k| match k {
        "CAIRN_EMBED_PROVIDER" => Some("openai".into()),
        "CAIRN_EMBED_BASE_URL" => Some(format!("{}/v1/", server.uri())),
        "CAIRN_EMBED_API_KEY" => Some("sk-test".into()),
        "CAIRN_EMBED_MODEL" => Some("embed-small".into()),
        "CAIRN_EMBED_TIMEOUT_MS" => Some(timeout_ms.to_string()),
        _ => None,
    });
    assert_eq!(c.provider, Provider::OpenAi);
    c.attempts = 3;
    c
}

/// A vector whose only non-zero value is `2.0` at `hot` (norm 2 before normalising).
fn vector(hot: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIMS];
    v[hot] = 2.0;
    v
}

fn answer(items: &[(usize, Vec<f32>)]) -> Value {
    json!({
        "object": "list",
        "data": items.iter().map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v})).collect::<Vec<_>>(),
        "model": "embed-small",
    })
}

fn embedder(server: &MockServer, timeout_ms: u64) -> Embedder {
    Embedder::from_config(&config(server, timeout_ms)).expect("configured")
}

#[tokio::test]
async fn sends_model_and_inputs_and_reads_vectors_in_index_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(header("authorization", "Bearer sk-test"))
        .and(body_partial_json(
            json!({"model": "embed-small", "input": ["a", "b"]}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer(&[(1, vector(7)), (0, vector(3))])))
        .expect(1)
        .mount(&server)
        .await;
    let e = embedder(&server, 2_000);
    assert_eq!(e.model(), "embed-small");
    let v = e.embed(vec!["a".into(), "b".into()]).await.unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0][3], 1.0, "normalised, and input 0 is index 0");
    assert_eq!(v[1][7], 1.0);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer(&[(0, vector(1))])))
        .expect(1)
        .mount(&server)
        .await;
    let v = embedder(&server, 2_000).embed_one("x").await.unwrap();
    assert_eq!(v[1], 1.0);
}

#[tokio::test]
async fn attempts_are_bounded() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .expect(3)
        .mount(&server)
        .await;
    let err = embedder(&server, 2_000).embed_one("x").await.unwrap_err();
    assert!(
        err.to_string().contains("after 3 attempts") && err.to_string().contains("500"),
        "{err}"
    );
}

#[tokio::test]
async fn a_slow_answer_times_out_and_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(answer(&[(0, vector(2))]))
                .set_delay(Duration::from_millis(1_500)),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer(&[(0, vector(5))])))
        .expect(1)
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let v = embedder(&server, 300).embed_one("x").await.unwrap();
    assert_eq!(v[5], 1.0, "the second, timely answer");
    assert!(
        started.elapsed() < Duration::from_millis(1_400),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string("bad key"))
        .expect(1)
        .mount(&server)
        .await;
    let err = embedder(&server, 2_000).embed_one("x").await.unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
}

#[tokio::test]
async fn malformed_or_mis_sized_answers_are_errors() {
    let bad: Vec<(&str, ResponseTemplate)> = vec![
        (
            "not json",
            ResponseTemplate::new(200).set_body_string("<html>oops</html>"),
        ),
        (
            "no data",
            ResponseTemplate::new(200).set_body_json(json!({"object": "list"})),
        ),
        ("too few", ResponseTemplate::new(200).set_body_json(answer(&[]))),
        (
            "wrong size",
            ResponseTemplate::new(200)
                .set_body_json(json!({"data": [{"index": 0, "embedding": [0.1, 0.2]}]})),
        ),
        (
            "bad index",
            ResponseTemplate::new(200).set_body_json(answer(&[(4, vector(0))])),
        ),
        (
            "strings",
            ResponseTemplate::new(200).set_body_json(json!({"data": [{"index": 0, "embedding": "abc"}]})),
        ),
    ];
    for (what, template) in bad {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(template)
            .expect(1)
            .mount(&server)
            .await;
        let result = embedder(&server, 2_000).embed_one("x").await;
        assert!(result.is_err(), "{what}: {result:?}");
    }
}

#[tokio::test]
async fn many_inputs_go_in_several_requests() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let n = body["input"].as_array().unwrap().len();
            ResponseTemplate::new(200)
                .set_body_json(answer(&(0..n).map(|i| (i, vector(i))).collect::<Vec<_>>()))
        })
        .expect(2)
        .mount(&server)
        .await;
    let inputs: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let v = embedder(&server, 2_000).embed(inputs).await.unwrap();
    assert_eq!(v.len(), 100);
    assert_eq!(v[70][70 - 64], 1.0, "the second request's 7th vector");
}

#[test]
fn without_a_base_url_embeddings_are_off() {
    let c = EmbedConfig::from_lookup(|k| (k == "CAIRN_EMBED_PROVIDER").then(|| "openai".into()));
    assert!(Embedder::from_config(&c).is_none());
}
