//! The Anthropic and OpenAI-compatible clients against a local mock server:
//! request shape, parsed answers and usage, and the class of every failure.

use std::time::Duration;

use cairn_generator::material::Material;
use cairn_generator::provider::{
    Completion, ErrorClass, Provider, ProviderError, Request,
    anthropic::Anthropic,
    config::{AnthropicConfig, OpenAiConfig},
    openai::OpenAi,
};
use cairn_shared::jobs::JobType;
use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{header, method, path},
};

const SYSTEM: &str = "You turn agent events into observations.";
const USER: &str = "<events>read src/main.rs</events>";
const ANTHROPIC_KEY: &str = "sk-ant-test-secret";
const OPENAI_KEY: &str = "sk-or-test-secret";

fn material() -> Material {
    Material {
        job_id: uuid::Uuid::nil(),
        job_type: JobType::Observations,
        project: "cairn".into(),
        agent: None,
        cwd: None,
        prompt_number: None,
        events: Vec::new(),
    }
}

async fn ask(provider: &dyn Provider) -> Result<Completion, ProviderError> {
    let material = material();
    provider
        .complete(Request {
            system: SYSTEM,
            user: USER,
            material: &material,
            summarise_turn: false,
            max_output_tokens: 1024,
        })
        .await
}

fn anthropic_at(base_url: &str, timeout: Duration) -> Anthropic {
    Anthropic::new(AnthropicConfig {
        api_key: ANTHROPIC_KEY.into(),
        base_url: base_url.into(),
        model: "claude-haiku-4-5".into(),
        timeout,
        max_output_tokens: 2048,
    })
    .unwrap()
}

fn openai_at(base_url: &str, api_key: Option<&str>, timeout: Duration) -> OpenAi {
    OpenAi::new(OpenAiConfig {
        base_url: base_url.into(),
        api_key: api_key.map(String::from),
        model: "llama3.1:8b".into(),
        timeout,
        max_output_tokens: 2048,
    })
    .unwrap()
}

const TIMEOUT: Duration = Duration::from_secs(5);

/// An Anthropic client whose every call is answered with `response`.
async fn anthropic_answering(response: ResponseTemplate) -> (MockServer, Anthropic) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(response)
        .mount(&server)
        .await;
    let client = anthropic_at(&server.uri(), TIMEOUT);
    (server, client)
}

/// An OpenAI-compatible client (with a key) whose every call is answered with `response`.
async fn openai_answering(response: ResponseTemplate) -> (MockServer, OpenAi) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    let client = openai_at(&format!("{}/v1", server.uri()), Some(OPENAI_KEY), TIMEOUT);
    (server, client)
}

fn anthropic_error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"type": "error", "error": {"type": kind, "message": message}}))
}

fn openai_error(status: u16, kind: &str, code: Option<&str>, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"error": {"message": message, "type": kind, "param": null, "code": code}}))
}

/// The call fails with `class`; the message never carries a key.
async fn fails_with(provider: &dyn Provider, class: ErrorClass) -> ProviderError {
    let err = ask(provider).await.expect_err("the call should fail");
    assert_eq!(err.class, class, "{err}");
    assert!(
        !err.message.contains(ANTHROPIC_KEY) && !err.message.contains(OPENAI_KEY),
        "{err}"
    );
    err
}

async fn only_request_body(server: &MockServer) -> (Value, wiremock::Request) {
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let request = requests.into_iter().next().unwrap();
    (serde_json::from_slice(&request.body).unwrap(), request)
}

// ---- Anthropic ----------------------------------------------------------

#[tokio::test]
async fn anthropic_success_sends_a_cached_system_prompt_and_reads_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", ANTHROPIC_KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .and(header("content-type", "application/json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5-20251001",
            "content": [
                {"type": "text", "text": "<observation>"},
                {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                {"type": "text", "text": "</observation>"}
            ],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 120,
                "output_tokens": 45,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 30
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    let provider = anthropic_at(&format!("{}/", server.uri()), TIMEOUT);

    let completion = ask(&provider).await.unwrap();

    assert_eq!(completion.text, "<observation></observation>");
    let usage = completion.usage;
    assert_eq!(usage.provider, "anthropic");
    assert_eq!(usage.model, "claude-haiku-4-5-20251001");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (120 + 900 + 30, 45),
        "input counts cached tokens too"
    );
    assert_eq!((usage.cached_tokens, usage.cache_creation_tokens), (900, 30));
    let (body, _) = only_request_body(&server).await;
    assert_eq!(
        body,
        json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 1024,
            "temperature": 0,
            "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": USER}]
        })
    );
}

#[tokio::test]
async fn anthropic_max_tokens_stop_is_not_an_error_and_model_falls_back() {
    let (_server, provider) = anthropic_answering(ResponseTemplate::new(200).set_body_json(json!({
        "content": [{"type": "text", "text": "<observation><title>cut"}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 10, "output_tokens": 1024}
    })))
    .await;
    let completion = ask(&provider).await.unwrap();
    assert_eq!(completion.text, "<observation><title>cut");
    assert_eq!(completion.usage.model, "claude-haiku-4-5");
    assert_eq!(completion.usage.cached_tokens, 0);
}

#[tokio::test]
async fn anthropic_429_reads_retry_after_seconds() {
    let response = anthropic_error(429, "rate_limit_error", "Number of requests exceeded")
        .insert_header("retry-after", "7");
    let (_server, provider) = anthropic_answering(response).await;
    let err = fails_with(&provider, ErrorClass::RateLimit).await;
    assert_eq!(err.retry_after, Some(Duration::from_secs(7)));
    assert!(err.message.contains("429"), "{err}");
    assert!(err.message.contains("Number of requests exceeded"), "{err}");
}

#[tokio::test]
async fn anthropic_429_reads_an_http_date_retry_after() {
    let at = chrono::Utc::now() + chrono::Duration::seconds(30);
    let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let response =
        anthropic_error(429, "rate_limit_error", "slow down").insert_header("Retry-After", date.as_str());
    let (_server, provider) = anthropic_answering(response).await;
    let err = fails_with(&provider, ErrorClass::RateLimit).await;
    let after = err.retry_after.expect("a Retry-After");
    assert!(
        after > Duration::from_secs(25) && after <= Duration::from_secs(30),
        "{after:?}"
    );
}

#[tokio::test]
async fn anthropic_529_overloaded_is_transient() {
    let (_server, provider) =
        anthropic_answering(anthropic_error(529, "overloaded_error", "Overloaded")).await;
    let err = fails_with(&provider, ErrorClass::Transient).await;
    assert!(
        err.message.contains("529") && err.message.contains("overloaded_error"),
        "{err}"
    );
}

#[tokio::test]
async fn anthropic_500_and_503_are_transient() {
    for status in [500, 503] {
        let (_server, provider) =
            anthropic_answering(anthropic_error(status, "api_error", "Internal error")).await;
        fails_with(&provider, ErrorClass::Transient).await;
    }
}

#[tokio::test]
async fn anthropic_401_is_auth() {
    let response = anthropic_error(401, "authentication_error", "invalid x-api-key");
    let (_server, provider) = anthropic_answering(response).await;
    let err = fails_with(&provider, ErrorClass::Auth).await;
    assert!(
        err.message.contains("401") && err.message.contains("invalid x-api-key"),
        "{err}"
    );
}

#[tokio::test]
async fn anthropic_400_invalid_request_is_unrecoverable() {
    let response = anthropic_error(400, "invalid_request_error", "max_tokens: must be at most 8192");
    let (_server, provider) = anthropic_answering(response).await;
    let err = fails_with(&provider, ErrorClass::Unrecoverable).await;
    assert!(err.message.contains("max_tokens: must be at most 8192"), "{err}");
}

#[tokio::test]
async fn anthropic_credit_balance_400_is_quota() {
    let response = anthropic_error(
        400,
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing.",
    );
    let (_server, provider) = anthropic_answering(response).await;
    fails_with(&provider, ErrorClass::Quota).await;
}

#[tokio::test]
async fn anthropic_long_error_messages_are_truncated() {
    let long = "ü".repeat(5000);
    let (_server, provider) = anthropic_answering(anthropic_error(400, "invalid_request_error", &long)).await;
    let err = fails_with(&provider, ErrorClass::Unrecoverable).await;
    assert!(
        err.message.chars().count() < 400,
        "{} chars",
        err.message.chars().count()
    );
}

#[tokio::test]
async fn anthropic_timeout_is_transient() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), Duration::from_millis(200));
    let err = fails_with(&provider, ErrorClass::Transient).await;
    assert!(err.message.contains("timed out"), "{err}");
}

#[tokio::test]
async fn anthropic_malformed_answers_are_parse_errors() {
    let bodies = [
        ResponseTemplate::new(200).set_body_string("<html><body>Gateway says hi</body></html>"),
        ResponseTemplate::new(200).set_body_string("not json at all"),
        ResponseTemplate::new(200).set_body_json(json!({"id": "msg_1", "usage": {"input_tokens": 1}})),
        ResponseTemplate::new(200).set_body_json(json!({"content": []})),
        ResponseTemplate::new(200).set_body_json(json!({"content": [{"type": "text", "text": "  "}]})),
    ];
    for response in bodies {
        let (_server, provider) = anthropic_answering(response).await;
        fails_with(&provider, ErrorClass::ParseError).await;
    }
}

#[tokio::test]
async fn anthropic_connection_refused_is_transient() {
    let provider = anthropic_at(&closed_port_url().await, TIMEOUT);
    let err = fails_with(&provider, ErrorClass::Transient).await;
    assert!(err.message.contains("connect"), "{err}");
}

// ---- OpenAI-compatible --------------------------------------------------

#[tokio::test]
async fn openai_success_sends_a_bearer_key_and_reads_cached_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {OPENAI_KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "openai/gpt-4o-mini",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "<observation/>"},
                "finish_reason": "stop"
            }],
            "usage": {
                "prompt_tokens": 1000,
                "completion_tokens": 60,
                "total_tokens": 1060,
                "prompt_tokens_details": {"cached_tokens": 768}
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1", server.uri()), Some(OPENAI_KEY), TIMEOUT);

    let completion = ask(&provider).await.unwrap();

    assert_eq!(completion.text, "<observation/>");
    let usage = completion.usage;
    assert_eq!(usage.provider, "openai");
    assert_eq!(usage.model, "openai/gpt-4o-mini");
    assert_eq!((usage.input_tokens, usage.output_tokens), (1000, 60));
    assert_eq!((usage.cached_tokens, usage.cache_creation_tokens), (768, 0));
    let (body, _) = only_request_body(&server).await;
    assert_eq!(
        body,
        json!({
            "model": "llama3.1:8b",
            "max_tokens": 1024,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": USER}
            ]
        })
    );
}

#[tokio::test]
async fn openai_without_a_key_sends_no_authorization_and_tolerates_missing_details() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": "<summary/>"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5}
        })))
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1/", server.uri()), None, TIMEOUT);

    let completion = ask(&provider).await.unwrap();

    assert_eq!(completion.text, "<summary/>");
    assert_eq!(completion.usage.model, "llama3.1:8b");
    assert_eq!(completion.usage.cached_tokens, 0);
    assert_eq!(completion.usage.input_tokens, 50);
    let (_, request) = only_request_body(&server).await;
    assert!(!request.headers.contains_key("authorization"));
}

#[tokio::test]
async fn openai_429_reads_retry_after_seconds() {
    let response = openai_error(429, "requests", Some("rate_limit_exceeded"), "Rate limit reached")
        .insert_header("Retry-After", "7");
    let (_server, provider) = openai_answering(response).await;
    let err = fails_with(&provider, ErrorClass::RateLimit).await;
    assert_eq!(err.retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn openai_429_reads_an_http_date_retry_after() {
    let at = chrono::Utc::now() + chrono::Duration::seconds(30);
    let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let response =
        openai_error(429, "requests", None, "slow down").insert_header("Retry-After", date.as_str());
    let (_server, provider) = openai_answering(response).await;
    let after = fails_with(&provider, ErrorClass::RateLimit)
        .await
        .retry_after
        .unwrap();
    assert!(
        after > Duration::from_secs(25) && after <= Duration::from_secs(30),
        "{after:?}"
    );
}

#[tokio::test]
async fn openai_insufficient_quota_429_is_quota() {
    let response = openai_error(
        429,
        "insufficient_quota",
        Some("insufficient_quota"),
        "You exceeded your current quota, please check your plan and billing details.",
    );
    let (_server, provider) = openai_answering(response).await;
    let err = fails_with(&provider, ErrorClass::Quota).await;
    assert!(err.message.contains("You exceeded your current quota"), "{err}");
}

#[tokio::test]
async fn openai_402_is_quota() {
    let response = openai_error(402, "payment_required", None, "Insufficient credits");
    let (_server, provider) = openai_answering(response).await;
    fails_with(&provider, ErrorClass::Quota).await;
}

#[tokio::test]
async fn openai_server_errors_are_transient() {
    for status in [500, 502, 503, 504] {
        let (_server, provider) = openai_answering(openai_error(status, "server_error", None, "oops")).await;
        fails_with(&provider, ErrorClass::Transient).await;
    }
    // A proxy's HTML error page.
    let html = ResponseTemplate::new(502).set_body_string("<html><h1>502 Bad Gateway</h1></html>");
    let (_server, provider) = openai_answering(html).await;
    let err = fails_with(&provider, ErrorClass::Transient).await;
    assert!(err.message.contains("502 Bad Gateway"), "{err}");
}

#[tokio::test]
async fn openai_401_is_auth() {
    let response = openai_error(
        401,
        "invalid_request_error",
        Some("invalid_api_key"),
        "Incorrect API key",
    );
    let (_server, provider) = openai_answering(response).await;
    fails_with(&provider, ErrorClass::Auth).await;
}

#[tokio::test]
async fn openai_400_and_404_are_unrecoverable() {
    let response = openai_error(400, "invalid_request_error", None, "context length exceeded");
    let (_server, provider) = openai_answering(response).await;
    fails_with(&provider, ErrorClass::Unrecoverable).await;
    // Ollama's shape for an unknown model.
    let response = ResponseTemplate::new(404).set_body_json(json!({"error": "model \"llama9\" not found"}));
    let (_server, provider) = openai_answering(response).await;
    let err = fails_with(&provider, ErrorClass::Unrecoverable).await;
    assert!(
        err.message.contains("404") && err.message.contains("llama9"),
        "{err}"
    );
}

#[tokio::test]
async fn openai_timeout_is_transient() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let provider = openai_at(&server.uri(), None, Duration::from_millis(200));
    let err = fails_with(&provider, ErrorClass::Transient).await;
    assert!(err.message.contains("timed out"), "{err}");
}

#[tokio::test]
async fn openai_malformed_answers_are_parse_errors() {
    let bodies = [
        ResponseTemplate::new(200).set_body_string("<!doctype html><p>LM Studio</p>"),
        ResponseTemplate::new(200).set_body_json(json!({"object": "chat.completion"})),
        ResponseTemplate::new(200).set_body_json(json!({"choices": []})),
        ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"content": null}}]})),
        ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"content": ""}}]})),
    ];
    for response in bodies {
        let (_server, provider) = openai_answering(response).await;
        fails_with(&provider, ErrorClass::ParseError).await;
    }
}

#[tokio::test]
async fn openai_connection_refused_is_transient() {
    let provider = openai_at(&format!("{}/v1", closed_port_url().await), None, TIMEOUT);
    fails_with(&provider, ErrorClass::Transient).await;
}

/// The address of a port nothing listens on (bound, then released).
async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}
