//! The Prometheus recorder (one per process) and the small listener that
//! serves it at `/metrics` on `CAIRN_METRICS_ADDR`.

use std::sync::OnceLock;

#[cfg(feature = "serve")]
use axum::{Router, routing::get};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Latency buckets (seconds) for the HTTP and job histograms.
const BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// Installs the global recorder on first call; later calls return the same handle.
pub fn handle() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
                .expect("buckets are not empty")
                .set_buckets_for_metric(
                    Matcher::Full(crate::names::INGEST_BATCH_EVENTS.into()),
                    &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0],
                )
                .expect("buckets are not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder (a test harness) may already be global: the handle still renders ours.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

#[cfg(feature = "serve")]
/// The `/metrics` route alone, for a separate listener or to merge elsewhere.
pub fn router() -> Router {
    let handle = handle();
    Router::new().route(
        "/metrics",
        get(move || {
            let handle = handle.clone();
            async move {
                handle.run_upkeep();
                ([("content-type", "text/plain; version=0.0.4")], handle.render())
            }
        }),
    )
}

#[cfg(feature = "serve")]
/// Binds `addr` and serves `/metrics` in the background; returns the bound
/// address. The recorder is global when this returns, so everything counted
/// after it (the workers' first claims) is rendered.
pub async fn serve(addr: std::net::SocketAddr) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    // Built here, not in the task: building it installs the recorder, and the
    // task may first run after the caller has counted.
    let app = router();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "metrics listener stopped");
        }
    });
    tracing::info!(addr = %bound, "metrics listening");
    Ok(bound)
}

/// How often the pool gauges are refreshed.
const POOL_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps the pool gauges (`service` label) current in the background while the pool is open.
pub fn watch_pool(pool: sqlx::PgPool, service: &'static str) {
    tokio::spawn(async move {
        while !pool.is_closed() {
            record_pool(&pool, service);
            tokio::time::sleep(POOL_EVERY).await;
        }
    });
}

/// Sets the pool gauges once.
pub fn record_pool(pool: &sqlx::PgPool, service: &'static str) {
    metrics::gauge!(crate::names::DB_POOL_SIZE, "service" => service).set(pool.size() as f64);
    metrics::gauge!(crate::names::DB_POOL_IDLE, "service" => service).set(pool.num_idle() as f64);
}
