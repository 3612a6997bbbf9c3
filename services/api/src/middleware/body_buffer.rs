//! Reads a request body whole before the handler runs, within a deadline and
//! a byte budget shared by all requests, so slow or half-sent bodies cannot
//! pile up memory: a body over the size limit answers 413 at once, one not
//! sent in time 408, and when the budget is spent a request waits briefly for
//! room and then answers 503 with `Retry-After`.

use std::{sync::Arc, time::Duration};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{StatusCode, header::CONTENT_LENGTH},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body_util::BodyExt;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// How long a request waits for room in the budget before answering 503.
const BUDGET_WAIT: Duration = Duration::from_secs(2);

#[derive(Clone)]
pub struct BodyBuffer {
    budget: Arc<Semaphore>,
    /// The budget in permits, one permit per KiB.
    budget_kib: u32,
    max_body: usize,
    read_timeout: Duration,
}

impl BodyBuffer {
    pub fn new(budget_bytes: usize, max_body: usize, read_timeout: Duration) -> Self {
        let budget_kib = u32::try_from(budget_bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX / 2);
        Self {
            budget: Arc::new(Semaphore::new(budget_kib as usize)),
            budget_kib,
            max_body,
            read_timeout,
        }
    }

    /// Permits held while a body of at most `bytes` is buffered.
    fn permits_for(&self, bytes: usize) -> u32 {
        u32::try_from(bytes.div_ceil(1024).max(1))
            .unwrap_or(u32::MAX)
            .min(self.budget_kib)
    }
}

fn too_large(max: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("the request body is over {max} bytes"),
    )
}

fn has_body(req: &Request) -> bool {
    req.headers().contains_key(CONTENT_LENGTH) || req.headers().contains_key("transfer-encoding")
}

pub async fn middleware(State(buffer): State<BodyBuffer>, req: Request, next: Next) -> Response {
    if !has_body(&req) {
        return next.run(req).await;
    }
    match read(&buffer, req).await {
        Ok((req, _permit)) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

async fn read(
    buffer: &BodyBuffer,
    req: Request,
) -> Result<(Request, tokio::sync::SemaphorePermit<'_>), ApiError> {
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > buffer.max_body) {
        return Err(too_large(buffer.max_body));
    }
    // A chunked body of unknown length reserves the most it may grow to.
    let reserve = buffer.permits_for(declared.unwrap_or(buffer.max_body));
    let permit = tokio::time::timeout(BUDGET_WAIT, buffer.budget.acquire_many(reserve))
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| ApiError::unavailable("the server is busy reading other requests; retry later"))?;
    let (parts, body) = req.into_parts();
    let limited = http_body_util::Limited::new(body, buffer.max_body);
    let collected = tokio::time::timeout(buffer.read_timeout, limited.collect())
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                "the request body was not sent in time",
            )
        })?
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                too_large(buffer.max_body)
            } else {
                ApiError::bad_request("body_unreadable", "the request body could not be read")
            }
        })?;
    let bytes = collected.to_bytes();
    Ok((Request::from_parts(parts, Body::from(bytes)), permit))
}
