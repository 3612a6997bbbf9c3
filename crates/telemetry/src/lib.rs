//! Telemetry shared by `cairn-api` and `cairn-generator`: the tracing
//! subscriber (log lines, optional OTLP traces), the Prometheus recorder and
//! its listener, the metric names, and the probes behind `health`.

pub mod health;
pub mod names;
pub mod otel;
pub mod prom;

use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

/// Keeps the trace exporter alive; dropping it flushes pending spans.
pub struct Telemetry {
    tracer: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.tracer.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs the global subscriber: `RUST_LOG` (else `default_filter`), JSON
/// lines when `CAIRN_LOG_FORMAT=json`, and OTLP traces when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is set (service name from
/// `OTEL_SERVICE_NAME`, else `service`).
pub fn init(service: &str, default_filter: &str) -> Telemetry {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let json = std::env::var("CAIRN_LOG_FORMAT").is_ok_and(|v| v == "json");
    let fmt = tracing_subscriber::fmt::layer().with_target(false);
    let fmt = if json { fmt.json().boxed() } else { fmt.boxed() };
    let (otel_layer, tracer) = match otel::from_env(service) {
        Ok(Some(provider)) => (Some(otel::layer(&provider)), Some(provider)),
        Ok(None) => (None, None),
        Err(e) => {
            eprintln!("{service}: traces are off: {e:#}");
            (None, None)
        }
    };
    // Logs follow `RUST_LOG`; traces keep every info span (`CAIRN_TRACE_FILTER`
    // narrows them), so quiet logs do not cut a trace short.
    let trace_filter = std::env::var("CAIRN_TRACE_FILTER").unwrap_or_else(|_| "info,sqlx=warn".into());
    let otel_layer = otel_layer.map(|l| l.with_filter(EnvFilter::new(trace_filter)));
    // A second init (tests) is harmless.
    let _ = tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(otel_layer)
        .try_init();
    Telemetry { tracer }
}
