//! Telemetry across the two services: one hook turn and the generator's job
//! share one trace at a mock OTLP receiver; the generator's `/metrics`
//! moves with the job; `health` follows the liveness file.

use std::{
    collections::{HashMap, HashSet},
    process::Command,
    time::{Duration, Instant, SystemTime},
};

use cairn_testkit::spawn_app;
use opentelemetry_proto::tonic::{collector::trace::v1::ExportTraceServiceRequest, common::v1::any_value};
use prost::Message;
use tracing_subscriber::layer::SubscriberExt;
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::path};

use super::support::{MINUTE, post_turn, spawn_process, wait_count};

const BIN: &str = env!("CARGO_BIN_EXE_cairn-generator");

fn health(file: &std::path::Path) -> Option<i32> {
    Command::new(BIN)
        .arg("health")
        .env("CAIRN_LIVENESS_FILE", file)
        .output()
        .unwrap()
        .status
        .code()
}

/// The value of the series named `name` whose line holds every label (summed).
fn series(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Trace ids by service name, from every export the receiver got.
async fn trace_ids(receiver: &MockServer) -> HashMap<String, HashSet<Vec<u8>>> {
    let mut by_service: HashMap<String, HashSet<Vec<u8>>> = HashMap::new();
    for req in receiver.received_requests().await.unwrap_or_default() {
        let export = ExportTraceServiceRequest::decode(req.body.as_slice()).expect("OTLP protobuf");
        for resource in export.resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|a| a.key == "service.name")
                .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                    any_value::Value::StringValue(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let ids = by_service.entry(service).or_default();
            for scope in resource.scope_spans {
                ids.extend(scope.spans.into_iter().map(|s| s.trace_id));
            }
        }
    }
    by_service
}

#[test]
fn version_and_help_exit_at_once() {
    for (arg, want) in [("--version", env!("CARGO_PKG_VERSION")), ("--help", "health")] {
        let started = Instant::now();
        let out = Command::new(BIN).arg(arg).env_clear().output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(want), "{out:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn health_fails_on_a_missing_or_stale_liveness_file() {
    let dir = std::env::temp_dir().join(format!("cairn-liveness-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("alive");
    assert_eq!(health(&file), Some(1), "missing");
    std::fs::write(&file, "x").unwrap();
    assert_eq!(health(&file), Some(0), "fresh");
    let old = SystemTime::now() - Duration::from_secs(45);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert_eq!(
        health(&file),
        Some(1),
        "stale: a hung generator stops touching it"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_from_hook_to_job_metrics_move_and_health_follows_the_process() {
    let receiver = MockServer::start().await;
    Mock::given(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    // The API runs in this test's (single) thread: its spans go to the receiver as cairn-api.
    let provider = cairn_telemetry::otel::provider(&receiver.uri(), "cairn-api").unwrap();
    let subscriber = tracing_subscriber::registry().with(cairn_telemetry::otel::layer(&provider));
    let _guard = tracing::subscriber::set_default(subscriber);

    let app = spawn_app().await;
    post_turn(&app, "s-trace", "trace the parser fix").await;
    let traced: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM generation_jobs WHERE project_id = $1 AND traceparent LIKE '00-%'",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(traced >= 1, "the ingest request's traceparent is kept on the job");

    let dir = std::env::temp_dir().join(format!("cairn-liveness-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let alive = dir.join("alive");
    let metrics_addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut generator = spawn_process(
        &app,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.uri().as_str()),
            ("CAIRN_METRICS_ADDR", metrics_addr.to_string().as_str()),
            ("CAIRN_LIVENESS_FILE", alive.to_str().unwrap()),
        ],
    );
    let completed = format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    );
    wait_count(&app.pool, &completed, 2, MINUTE).await;
    assert_eq!(health(&alive), Some(0), "a running generator is alive");

    // Gauges refresh each sweep (250 ms here).
    tokio::time::sleep(Duration::from_millis(800)).await;
    let text = reqwest::get(format!("http://{metrics_addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // The counters match the state machine's audit log exactly: the
    // recorder is global before the workers start (a claim made before it
    // was installed went uncounted, under CPU load).
    let events: Vec<(String, Option<String>, String, String)> = sqlx::query_as(
        "SELECT e.job_id::text, e.from_status, e.to_status, e.actor FROM generation_job_events e
         WHERE e.project_id = $1 ORDER BY e.id",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let logged = |from: &str, to: &str| {
        events
            .iter()
            .filter(|(_, f, t, _)| f.as_deref() == Some(from) && t == to)
            .count() as f64
    };
    assert_eq!(
        series(&text, "cairn_job_transitions_total", &["transition=\"claim\""]),
        logged("queued", "processing"),
        "{text}\njob events: {events:#?}"
    );
    assert_eq!(
        series(
            &text,
            "cairn_job_transitions_total",
            &["from=\"processing\"", "to=\"completed\""]
        ),
        logged("processing", "completed"),
        "{text}\njob events: {events:#?}"
    );
    assert!(
        logged("processing", "completed") >= 2.0,
        "job events: {events:#?}"
    );
    assert!(
        series(
            &text,
            "cairn_provider_calls_total",
            &["provider=\"heuristic\"", "outcome=\"ok\""]
        ) >= 1.0,
        "{text}"
    );
    assert!(
        series(
            &text,
            "cairn_job_claim_to_complete_seconds_count",
            &["outcome=\"completed\""]
        ) >= 1.0,
        "{text}"
    );
    assert_eq!(
        series(&text, "cairn_queue_jobs", &["status=\"completed\""]),
        2.0,
        "{text}"
    );
    assert!(
        series(&text, "cairn_db_pool_connections", &["service=\"generator\""]) >= 1.0,
        "{text}"
    );

    // SIGTERM: the generator drains and flushes its spans; ours are flushed here.
    generator.signal("TERM");
    assert!(generator.wait_exit(Duration::from_secs(20)).await.success());
    provider.force_flush().unwrap();
    let by_service = trace_ids(&receiver).await;
    let api = by_service.get("cairn-api").cloned().unwrap_or_default();
    let generator_ids = by_service.get("cairn-generator").cloned().unwrap_or_default();
    assert!(!api.is_empty() && !generator_ids.is_empty(), "{by_service:?}");
    assert!(
        api.intersection(&generator_ids).next().is_some(),
        "the generator's job spans continue the hook request's trace"
    );
    assert_eq!(health(&alive).map(|c| c == 0 || c == 1), Some(true));
    std::fs::remove_dir_all(dir).unwrap();
}
