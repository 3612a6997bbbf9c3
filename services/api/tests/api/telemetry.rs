//! Telemetry: `/metrics` on its own listener moves with real requests (by
//! route template, never raw path), and the binary's `--help`, `--version`
//! and `health` exit as documented. The access log has a test binary of its
//! own (`tests/access_log.rs`).

use std::{
    process::Command,
    time::{Duration, Instant},
};

use serde_json::json;

use super::helpers::{cc, spawn_app};

const BIN: &str = env!("CARGO_BIN_EXE_cairn-api");

/// The value of the series whose name and labels all appear on one line (0 when absent).
fn series(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| {
            l.starts_with(name) && (l.len() == name.len() || matches!(l.as_bytes()[name.len()], b'{' | b' '))
        })
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn scrape(client: &reqwest::Client, addr: std::net::SocketAddr) -> String {
    let res = client.get(format!("http://{addr}/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

#[tokio::test]
async fn metrics_move_with_requests_by_route_template_and_ingest_kind() {
    let addr = cairn_telemetry::prom::serve("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let app = spawn_app().await;
    let before = scrape(&app.client, addr).await;
    let job_route = ["route=\"/v1/jobs/{id}\"", "status=\"404\""];
    let prompts = [
        "cairn_ingest_events_total",
        "agent=\"claude-code\"",
        "kind=\"UserPrompt\"",
    ];

    let (status, _) = app
        .hook(cc("m-1", "UserPromptSubmit", json!({ "prompt": "p" })))
        .await;
    assert_eq!(status, 200);
    let mut replayed = cc(
        "m-1",
        "PostToolUse",
        json!({ "tool_name": "Bash", "tool_use_id": "t1", "tool_input": { "command": "ls" } }),
    );
    replayed["session_id"] = json!("m-1");
    let res = app
        .client
        .post(format!("{}/v1/hooks/claude-code", app.base))
        .bearer_auth(&app.ingest_token)
        .header("x-cairn-replay", "1")
        .json(&replayed)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    for _ in 0..3 {
        let id = uuid::Uuid::now_v7();
        let (status, _) = app.get(&format!("/v1/jobs/{id}"), Some(&app.admin_token)).await;
        assert_eq!(status, 404);
    }
    let after = scrape(&app.client, addr).await;

    let ingest = |text: &str| series(text, prompts[0], &prompts[1..]);
    assert!(ingest(&after) - ingest(&before) >= 1.0, "{after}");
    let replays = |text: &str| {
        series(
            text,
            "cairn_ingest_replayed_events_total",
            &["agent=\"claude-code\""],
        )
    };
    assert!(replays(&after) - replays(&before) >= 1.0, "{after}");
    let jobs = |text: &str| series(text, "cairn_http_requests_total", &job_route);
    assert!(jobs(&after) - jobs(&before) >= 3.0, "{after}");
    let hist = |text: &str| series(text, "cairn_http_request_duration_seconds_count", &job_route);
    assert!(hist(&after) - hist(&before) >= 3.0, "{after}");
    assert!(
        !after.contains("route=\"/v1/jobs/0"),
        "raw paths never become labels"
    );
    assert!(
        after.contains("cairn_http_request_duration_seconds_bucket"),
        "latency is a histogram"
    );
}

#[test]
fn help_and_version_exit_at_once_without_a_database() {
    for (arg, want) in [("--help", "health"), ("--version", env!("CARGO_PKG_VERSION"))] {
        let started = Instant::now();
        let out = Command::new(BIN)
            .arg(arg)
            .env_remove("CAIRN_DATABASE_URL")
            .output()
            .unwrap();
        assert!(out.status.success(), "{arg}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(want),
            "{arg}: {out:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{arg} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn health_exits_0_against_a_ready_api_and_1_when_nothing_answers() {
    let app = spawn_app().await;
    let ok = tokio::process::Command::new(BIN)
        .args(["health", "--url", &app.base])
        .output()
        .await
        .unwrap();
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    // A port nothing listens on.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let started = Instant::now();
    let down = tokio::process::Command::new(BIN)
        .args(["health", "--url", &format!("http://{free}")])
        .output()
        .await
        .unwrap();
    assert_eq!(down.status.code(), Some(1), "{down:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn health_exits_1_when_readiness_is_not_200_within_3_s() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let started = Instant::now();
    let out = tokio::process::Command::new(BIN)
        .args(["health", "--url", &format!("http://{addr}")])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(8),
        "{took:?}"
    );
    hold.abort();
}
