//! The dashboard's settings, read from the environment when used:
//! `CAIRN_DASHBOARD_SESSION_MINUTES` (default 480, the session's lifetime) and
//! `CAIRN_DASHBOARD_SECURE_COOKIE` (`true` marks the cookie `Secure` even when
//! the request did not arrive over https as far as the API can tell).

use axum::http::HeaderMap;

const DEFAULT_SESSION_MINUTES: i64 = 8 * 60;

/// The session lifetime in seconds (at least one minute).
pub fn session_seconds() -> i64 {
    std::env::var("CAIRN_DASHBOARD_SESSION_MINUTES")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|m| *m > 0)
        .unwrap_or(DEFAULT_SESSION_MINUTES)
        * 60
}

/// Whether the cookie is marked `Secure`: the configured flag, a public URL
/// on https, or a proxy saying the request came over https.
pub fn secure_cookie(public_url: &str, headers: &HeaderMap) -> bool {
    let flag = std::env::var("CAIRN_DASHBOARD_SECURE_COOKIE")
        .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
    let forwarded = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    flag || forwarded || public_url.starts_with("https://")
}
