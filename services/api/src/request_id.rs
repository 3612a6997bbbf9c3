//! `X-Request-Id`: taken from the client when well-formed, otherwise minted;
//! echoed on every response and available to error bodies and logs.

use std::sync::LazyLock;

use axum::{
    extract::Request,
    http::{HeaderName, HeaderValue},
    middleware::Next,
    response::Response,
};
use regex::Regex;

pub static HEADER: HeaderName = HeaderName::from_static("x-request-id");

static VALID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$").unwrap());

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The current request's id, inside a request.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(|id| id.clone()).ok()
}

/// Runs `f` with `id` as the current request id (for work moved to another task).
pub fn scope<F: std::future::Future>(id: String, f: F) -> impl std::future::Future<Output = F::Output> {
    REQUEST_ID.scope(id, f)
}

pub async fn middleware(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| VALID.is_match(v))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string());
    let value = HeaderValue::from_str(&id).expect("request ids are ASCII");
    req.headers_mut().insert(HEADER.clone(), value.clone());
    let span =
        tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path());
    let mut res = tracing::Instrument::instrument(REQUEST_ID.scope(id, next.run(req)), span).await;
    res.headers_mut().insert(HEADER.clone(), value);
    res
}

#[cfg(test)]
mod tests {
    #[test]
    fn accepts_only_the_documented_shape() {
        assert!(super::VALID.is_match("abc-123_X"));
        assert!(!super::VALID.is_match("-abc"));
        assert!(!super::VALID.is_match("a b"));
        assert!(!super::VALID.is_match(&"a".repeat(65)));
    }
}
