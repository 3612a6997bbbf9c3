//! HTTP metrics: requests and latency by matched route template (never the
//! raw path, which would make a series per id), method and status.

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request},
    middleware::Next,
    response::Response,
};
use cairn_telemetry::names;

/// The label for requests no route matched (404s of unknown paths).
pub const UNMATCHED: &str = "unmatched";

pub async fn middleware(req: Request, next: Next) -> Response {
    let route = route_of(&req);
    let method = req.method().as_str().to_owned();
    let started = Instant::now();
    let res = next.run(req).await;
    let status = res.status().as_u16().to_string();
    let labels = [("route", route), ("method", method), ("status", status)];
    metrics::counter!(names::HTTP_REQUESTS, &labels).increment(1);
    metrics::histogram!(names::HTTP_DURATION, &labels).record(started.elapsed().as_secs_f64());
    res
}

/// The matched route template, e.g. `/v1/jobs/{id}`.
pub fn route_of(req: &Request) -> String {
    req.extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| UNMATCHED.to_owned())
}
