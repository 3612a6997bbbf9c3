//! OTLP traces: the exporter (HTTP/protobuf, on only when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set) and the W3C `traceparent` that
//! carries one trace from the API's ingest span to the generator's job span.

use std::collections::HashMap;

use opentelemetry::{
    propagation::TextMapPropagator,
    trace::{TraceContextExt, TracerProvider as _},
};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::{Resource, propagation::TraceContextPropagator, trace::SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::registry::LookupSpan;

/// The provider configured from the environment, or `None` when traces are off.
pub fn from_env(default_service: &str) -> anyhow::Result<Option<SdkTracerProvider>> {
    let Some(endpoint) = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty())
    else {
        return Ok(None);
    };
    let service = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default_service.to_string());
    provider(&endpoint, &service).map(Some)
}

/// A batching provider that posts to `<endpoint>/v1/traces`.
pub fn provider(endpoint: &str, service: &str) -> anyhow::Result<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(service.to_string()).build())
        .build())
}

/// The tracing layer that turns spans into OTel spans for `provider`.
pub fn layer<S>(
    provider: &SdkTracerProvider,
) -> tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_opentelemetry::layer().with_tracer(provider.tracer("cairn"))
}

/// The current span's W3C `traceparent`, when traces are on.
pub fn current_traceparent() -> Option<String> {
    let context = tracing::Span::current().context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    carrier.remove("traceparent")
}

/// Makes `span` a child of the trace `traceparent` names (a no-op when it is malformed).
pub fn continue_trace(span: &tracing::Span, traceparent: &str) {
    let carrier = HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn a_traceparent_taken_from_one_span_parents_another() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry().with(super::layer(&provider));
        tracing::subscriber::with_default(subscriber, || {
            assert_eq!(super::current_traceparent(), None, "no span, no context");
            let ingest = tracing::info_span!("ingest");
            let traceparent = ingest
                .in_scope(super::current_traceparent)
                .expect("a traceparent");
            assert!(
                traceparent.starts_with("00-") && traceparent.len() == 55,
                "{traceparent}"
            );
            let trace_id = &traceparent[3..35];

            let job = tracing::info_span!("job");
            super::continue_trace(&job, &traceparent);
            let continued = job.context().span().span_context().trace_id().to_string();
            assert_eq!(continued, trace_id);

            let stray = tracing::info_span!("stray");
            super::continue_trace(&stray, "not a traceparent");
            let own = stray.context().span().span_context().trace_id().to_string();
            assert_ne!(own, trace_id, "a malformed traceparent starts a trace of its own");
        });
    }
}
