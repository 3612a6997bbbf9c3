//! Floods and slow clients: per-token and per-address rate limits answer 429
//! with `Retry-After`; a refused token is answered from memory; half-sent
//! headers and bodies are cut off; oversized requests get the JSON error.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::helpers::{Options, TestApp, spawn_app, spawn_app_with};

async fn app_with(extra: &[(&'static str, &str)]) -> TestApp {
    spawn_app_with(Options {
        extra: extra.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        ..Options::default()
    })
    .await
}

fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_string()
}

/// Sends raw bytes and reads until the server answers or closes.
async fn raw(app: &TestApp, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr(app)).await.unwrap();
    s.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn a_flood_with_one_bad_token_gets_429_with_retry_after() {
    let app = app_with(&[
        ("CAIRN_RATE_LIMIT_PER_TOKEN", "5"),
        ("CAIRN_RATE_LIMIT_PER_TOKEN_BURST", "10"),
    ])
    .await;
    let client = reqwest::Client::new();
    let mut statuses = vec![];
    let mut retry_after = None;
    for _ in 0..30 {
        let res = client
            .get(format!("{}/v1/info", app.base))
            .bearer_auth("garbage-token")
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        statuses.push(status);
        if status == 429 {
            retry_after = res.headers().get("retry-after").cloned();
            let body: Value = res.json().await.unwrap();
            assert_eq!(body["error"]["code"], "rate_limited", "{body}");
        }
    }
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert!(refused >= 15, "at most the burst passes: {statuses:?}");
    assert!(statuses[..5].iter().all(|s| *s == 403), "{statuses:?}");
    let seconds: u64 = retry_after.unwrap().to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&seconds), "{seconds}");
    // Another token is not affected.
    let (status, _) = app.get("/v1/info", Some(&app.admin_token)).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_flood_from_one_address_gets_429() {
    let app = app_with(&[
        ("CAIRN_RATE_LIMIT_PER_IP", "5"),
        ("CAIRN_RATE_LIMIT_PER_IP_BURST", "5"),
    ])
    .await;
    let mut refused = 0;
    for i in 0..20 {
        let token = format!("t{i}");
        let (status, _) = app.get("/v1/info", Some(&token)).await;
        refused += usize::from(status == 429);
    }
    assert!(refused >= 10, "{refused}");
}

/// `n` requests with one bad token, alternating between `replicas`: how
/// many were let through (403, not 429), and how many a 1/s rate can have
/// replenished while they ran (the seconds they took, rounded up).
async fn allowed_across(replicas: &[&TestApp], n: usize) -> (usize, usize) {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut allowed = 0;
    for i in 0..n {
        let res = client
            .get(format!("{}/v1/info", replicas[i % replicas.len()].base))
            .bearer_auth("garbage-token")
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        assert!(status == 403 || status == 429, "{status}");
        allowed += usize::from(status == 403);
    }
    (allowed, started.elapsed().as_secs_f64().ceil() as usize)
}

#[tokio::test]
async fn replicas_share_one_rate_limit_through_redis() {
    let limits = [
        ("CAIRN_RATE_LIMIT_PER_TOKEN", "1"),
        ("CAIRN_RATE_LIMIT_PER_TOKEN_BURST", "10"),
    ];
    let first = app_with(&limits).await;
    let second = first.restart().await;
    // 30 requests, 15 at each replica: each replica's own counters would
    // let 10 + 10 through; together they get the burst of 10 (and what a
    // second replenishes), whichever replica is asked.
    let (allowed, replenished) = allowed_across(&[&first, &second], 30).await;
    assert!(
        (10..=10 + replenished).contains(&allowed),
        "{allowed} of 30 let through in {replenished} s"
    );

    // Each replica on its own counters (CAIRN_RATE_LIMIT_SHARED=false): N times the rate.
    let mut own = limits.to_vec();
    own.push(("CAIRN_RATE_LIMIT_SHARED", "false"));
    let first = app_with(&own).await;
    let second = first.restart().await;
    let (allowed, _) = allowed_across(&[&first, &second], 30).await;
    assert!(allowed >= 20, "{allowed} of 30 let through");
}

#[tokio::test]
async fn without_redis_each_replica_still_limits_on_its_own() {
    let app = spawn_app_with(Options {
        redis_url: "redis://127.0.0.1:1".into(),
        extra: vec![
            ("CAIRN_RATE_LIMIT_PER_TOKEN", "1".into()),
            ("CAIRN_RATE_LIMIT_PER_TOKEN_BURST", "10".into()),
        ],
    })
    .await;
    let (allowed, took) = allowed_across(&[&app], 30).await;
    assert!(
        (10..=10 + took).contains(&allowed),
        "{allowed} of 30 let through in {took} s"
    );
    assert!(took < 10, "a Redis that is not there slows no request: {took} s");
}

#[tokio::test]
async fn a_revoked_token_is_refused_from_memory_without_a_database_lookup() {
    let app = spawn_app().await;
    let secret = app.mint(json!({"name": "gone", "scopes": ["read"]})).await;
    let id: uuid::Uuid = sqlx::query_scalar("SELECT id FROM api_tokens WHERE name = 'gone'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    app.post(
        &format!("/v1/admin/tokens/{id}/revoke"),
        Some(&app.admin_token),
        &json!({}),
    )
    .await;
    let (status, res) = app.get("/v1/info", Some(&secret)).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("token_revoked"))
    );
    // With the token table unreadable, the refusal still comes from memory
    // (a lookup would fail with 5xx).
    sqlx::query("ALTER TABLE api_tokens RENAME TO api_tokens_away")
        .execute(&app.pool)
        .await
        .unwrap();
    let (status, res) = app.get("/v1/info", Some(&secret)).await;
    sqlx::query("ALTER TABLE api_tokens_away RENAME TO api_tokens")
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("token_revoked")),
        "{res}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_headers_are_cut_off() {
    let app = app_with(&[("CAIRN_HEADER_READ_TIMEOUT_MS", "500")]).await;
    let mut s = TcpStream::connect(addr(&app)).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    assert!(
        read.is_ok(),
        "the server must close a connection whose headers never end"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_body_answers_408_and_is_released() {
    let app = app_with(&[("CAIRN_BODY_READ_TIMEOUT_MS", "500")]).await;
    let mut s = TcpStream::connect(addr(&app)).await.unwrap();
    let head = format!(
        "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"projectId\":",
        app.ingest_token
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut out))
        .await
        .expect("answered in time")
        .unwrap();
    let text = String::from_utf8_lossy(&out[..n]);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("\"body_timeout\""), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_buffered_at_once_are_bounded_and_the_excess_waits_then_gets_503() {
    let app = app_with(&[
        ("CAIRN_MAX_BUFFERED_BODY_BYTES", "262144"),
        ("CAIRN_BODY_READ_TIMEOUT_MS", "5000"),
    ])
    .await;
    // Two half-sent 200 KB bodies: the first takes the whole budget.
    let head = |token: &str| {
        format!(
            "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{{"
        )
    };
    let mut first = TcpStream::connect(addr(&app)).await.unwrap();
    first.write_all(head(&app.ingest_token).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = raw(&app, head(&app.ingest_token).as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after"), "{answer}");
    drop(first);
    // Small requests still pass once the budget is back.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _) = app.get("/healthz", None).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn oversized_headers_and_uris_get_the_json_error() {
    let app = spawn_app().await;
    let long_uri = format!(
        "GET /v1/search?q={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(20_000)
    );
    let answer = raw(&app, long_uri.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 414"),
        "{}",
        &answer[..answer.len().min(200)]
    );
    assert!(answer.contains("\"uri_too_long\""), "{answer}");
    let big_header = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(64_000)
    );
    let answer = raw(&app, big_header.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(answer.contains("\"headers_too_large\""), "{answer}");
    let many: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    let answer = raw(
        &app,
        format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(answer.contains("\"headers_too_large\""), "{answer}");
}

#[tokio::test]
async fn what_hyper_refuses_before_routing_carries_the_json_error_too() {
    let app = spawn_app().await;
    let huge_uri = format!(
        "GET /v1/search?q={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    let control_byte = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n".to_string();
    let huge_header = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(300_000)
    );
    for (request, status, code) in [
        (huge_uri, "414", "uri_too_long"),
        (control_byte, "400", "bad_request"),
        (huge_header, "431", "headers_too_large"),
    ] {
        let answer = raw(&app, request.as_bytes()).await;
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{answer}");
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(body["error"]["code"], code, "{body}");
    }
    // The server goes on answering.
    let (status, _) = app.get("/healthz", None).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_mcp_endpoints_4xx_answers_carry_the_json_error_body() {
    let app = spawn_app().await;
    let client = reqwest::Client::new();
    // Wrong Accept and content type: refused by the MCP transport itself.
    let res = client
        .post(format!("{}/v1/mcp", app.base))
        .bearer_auth(&app.admin_token)
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    assert!((400..500).contains(&status), "{status}");
    let body: Value = res.json().await.expect("a JSON error body");
    assert!(body["error"]["code"].is_string(), "{body}");
    let res = client
        .get(format!("{}/v1/mcp", app.base))
        .bearer_auth(&app.admin_token)
        .send()
        .await
        .unwrap();
    if res.status().is_client_error() {
        let body: Value = res.json().await.expect("a JSON error body");
        assert!(body["error"]["code"].is_string(), "{body}");
    }
}
