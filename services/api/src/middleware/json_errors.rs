//! Every error answer carries the API's JSON error body: responses made below
//! the handlers (the MCP transport's, a framework rejection) that arrive
//! without one get it here, keeping their status and headers.

use axum::{
    extract::Request,
    http::{StatusCode, header::CONTENT_TYPE},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::error::ApiError;

fn code_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::UNAUTHORIZED => "missing_credentials",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "route_not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_ACCEPTABLE => "not_acceptable",
        StatusCode::REQUEST_TIMEOUT => "request_timeout",
        StatusCode::CONFLICT => "conflict",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::URI_TOO_LONG => "uri_too_long",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid_request",
        StatusCode::TOO_MANY_REQUESTS => "rate_limited",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "headers_too_large",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        s if s.is_client_error() => "bad_request",
        _ => "internal",
    }
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

pub async fn middleware(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let message = String::from_utf8_lossy(&text).trim().to_string();
    let message = if message.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        message
    };
    let rebuilt = ApiError::new(status, code_for(status), message).into_response();
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    parts
        .headers
        .insert(CONTENT_TYPE, rebuilt.headers()[CONTENT_TYPE].clone());
    Response::from_parts(parts, rebuilt.into_body())
}
