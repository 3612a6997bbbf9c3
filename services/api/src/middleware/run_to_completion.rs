//! Runs the handler in a task of its own, so a client that disconnects (or a
//! request timeout) drops only the wait for the answer, never the handler
//! between `BEGIN` and `COMMIT`: a transaction cut short there would return
//! its connection to the pool still inside the transaction.

use axum::{
    extract::Request,
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{error::ApiError, request_id};

pub async fn middleware(req: Request, next: Next) -> Response {
    let id = request_id::current().unwrap_or_default();
    let span = tracing::Span::current();
    let task = tokio::spawn(tracing::Instrument::instrument(
        request_id::scope(id, next.run(req)),
        span,
    ));
    match task.await {
        Ok(response) => response,
        Err(e) => {
            tracing::error!(error = %e, "request task failed");
            ApiError::internal().into_response()
        }
    }
}
