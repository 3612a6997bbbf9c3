//! The dashboard's files, compiled into the binary. They are served under
//! `/assets/{version}/…`, where the version is a hash of their contents, so
//! they can be cached for a year; `/` (the page naming that version) is
//! revalidated on every load.

use std::sync::LazyLock;

use axum::{
    extract::Path,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

use crate::error::ApiError;

macro_rules! asset {
    ($name:literal, $mime:literal) => {
        ($name, $mime, include_str!(concat!("assets/", $name)))
    };
}

/// Name, content type, content.
const FILES: &[(&str, &str, &str)] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
    asset!("chart.js", "text/javascript; charset=utf-8"),
    asset!("project.js", "text/javascript; charset=utf-8"),
    asset!("person.js", "text/javascript; charset=utf-8"),
    asset!("pages/signin.js", "text/javascript; charset=utf-8"),
    asset!("pages/teams.js", "text/javascript; charset=utf-8"),
    asset!("pages/projects.js", "text/javascript; charset=utf-8"),
    asset!("pages/tokens.js", "text/javascript; charset=utf-8"),
    asset!("pages/audit.js", "text/javascript; charset=utf-8"),
    asset!("pages/observations.js", "text/javascript; charset=utf-8"),
    asset!("pages/jobs.js", "text/javascript; charset=utf-8"),
    asset!("pages/sessions.js", "text/javascript; charset=utf-8"),
    asset!("pages/live.js", "text/javascript; charset=utf-8"),
    asset!("pages/cli_login.js", "text/javascript; charset=utf-8"),
    asset!("pages/members.js", "text/javascript; charset=utf-8"),
    asset!("pages/review.js", "text/javascript; charset=utf-8"),
    ("favicon.svg", "image/svg+xml", include_str!("assets/favicon.svg")),
];

const INDEX: &str = include_str!("assets/index.html");

/// A hash of every file: changes whenever any of them does.
pub static VERSION: LazyLock<String> = LazyLock::new(|| {
    let mut hash = Sha256::new();
    for (name, _, body) in FILES {
        hash.update(name.as_bytes());
        hash.update(body.as_bytes());
    }
    hex::encode(&hash.finalize()[..6])
});

static INDEX_HTML: LazyLock<String> = LazyLock::new(|| INDEX.replace("__VERSION__", &VERSION));

/// `GET /`: the single page.
pub async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX_HTML.as_str(),
    )
        .into_response()
}

/// `GET /assets/{version}/{file}`.
pub async fn asset(Path((version, file)): Path<(String, String)>) -> Response {
    serve(&version, &file)
}

/// `GET /assets/{version}/pages/{file}`.
pub async fn page_asset(Path((version, file)): Path<(String, String)>) -> Response {
    serve(&version, &format!("pages/{file}"))
}

fn serve(version: &str, file: &str) -> Response {
    let Some((_, mime, body)) = FILES.iter().find(|(name, _, _)| *name == file) else {
        return ApiError::not_found("asset_not_found", "no such dashboard file").into_response();
    };
    // An old page asking for its old version gets today's file, uncached.
    let cache = if version == VERSION.as_str() {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = (*body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}
