//! The access log: tower-http's `TraceLayer`, one `access` line per request
//! carrying the request id, matched route, method, status, latency and the
//! caller's token id (the id only; the token never reaches a log).

use std::time::Duration;

use axum::{extract::Request, http::Response};
use tower_http::{
    classify::{ServerErrorsAsFailures, SharedClassifier},
    trace::{DefaultOnBodyChunk, DefaultOnEos, DefaultOnFailure, DefaultOnRequest, TraceLayer},
};

use crate::{auth::Auth, middleware::metrics::route_of, request_id};

type MakeSpan = fn(&Request) -> tracing::Span;
type OnResponse<B> = fn(&Response<B>, Duration, &tracing::Span);

pub fn layer<B>() -> TraceLayer<
    SharedClassifier<ServerErrorsAsFailures>,
    MakeSpan,
    DefaultOnRequest,
    OnResponse<B>,
    DefaultOnBodyChunk,
    DefaultOnEos,
    DefaultOnFailure,
> {
    TraceLayer::new_for_http()
        .make_span_with(make_span as MakeSpan)
        .on_response(on_response::<B> as OnResponse<B>)
}

fn make_span(req: &Request) -> tracing::Span {
    let request_id = req
        .headers()
        .get(&request_id::HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "http",
        request_id = %request_id,
        method = %req.method(),
        route = %route_of(req),
        status = tracing::field::Empty,
        latency_ms = tracing::field::Empty,
        token_id = tracing::field::Empty,
    )
}

fn on_response<B>(res: &Response<B>, latency: Duration, span: &tracing::Span) {
    let status = res.status().as_u16();
    let latency_ms = latency.as_secs_f64() * 1000.0;
    span.record("status", status);
    span.record("latency_ms", latency_ms);
    tracing::info!(target: "cairn::access", status, latency_ms, "access");
}

/// Names the authenticated caller on the request's span (called by the `Auth` extractor).
pub fn record_token(auth: &Auth) {
    tracing::Span::current().record("token_id", tracing::field::display(auth.token_id));
}
