//! URI length, header count and header bytes, checked before anything reads
//! the request, so an oversized request gets the API's JSON error (414/431).
//! The HTTP server's own limits sit above these (see `server.rs`) and answer
//! bare 431s only past them.

use axum::{
    extract::{Request, State},
    http::StatusCode,
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{config::Limits, error::ApiError};

#[derive(Clone, Copy)]
pub struct RequestLimits {
    pub max_uri_bytes: usize,
    pub max_header_bytes: usize,
    pub max_headers: usize,
}

impl From<&Limits> for RequestLimits {
    fn from(l: &Limits) -> Self {
        Self {
            max_uri_bytes: l.max_uri_bytes,
            max_header_bytes: l.max_header_bytes,
            max_headers: l.max_headers,
        }
    }
}

pub fn check(limits: &RequestLimits, req: &Request) -> Result<(), ApiError> {
    let uri = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri > limits.max_uri_bytes {
        return Err(ApiError::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request URI is over {} bytes", limits.max_uri_bytes),
        ));
    }
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if headers.len() > limits.max_headers || bytes > limits.max_header_bytes {
        return Err(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!(
                "the request carries over {} headers or {} bytes of them",
                limits.max_headers, limits.max_header_bytes
            ),
        ));
    }
    Ok(())
}

pub async fn middleware(State(limits): State<RequestLimits>, req: Request, next: Next) -> Response {
    match check(&limits, &req) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}
