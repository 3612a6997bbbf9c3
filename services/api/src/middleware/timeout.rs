//! The request timeout: past it the client gets 503 with `Retry-After`
//! (the handler, running to completion in its own task, is not cut short).

use std::time::Duration;

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::error::ApiError;

pub async fn middleware(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::unavailable("the request took too long; retry later").into_response(),
    }
}
