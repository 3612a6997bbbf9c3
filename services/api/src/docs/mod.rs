//! The API's documentation: `/docs`, the API reference (Redoc, pinned) served
//! from the binary itself, so it works with no network (the page, the Redoc
//! bundle, the document at `/openapi.json`; nothing from a CDN), and what the
//! OpenAPI document says on every operation (`contract`).

pub mod contract;

use axum::{
    Router,
    http::{HeaderValue, header},
    response::{Html, IntoResponse},
    routing::get,
};

/// The Redoc release bundled here (npm `redoc`, `bundles/redoc.standalone.js`;
/// MIT, see `assets/REDOC-LICENSE`).
pub const REDOC_VERSION: &str = "3.0.1";
/// Where the bundle is served; the version in the path lets it be cached for good.
pub const REDOC_PATH: &str = "/docs/redoc-3.0.1.standalone.js";

const REDOC_JS: &[u8] = include_bytes!("assets/redoc-3.0.1.standalone.js");

const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cairn API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="/docs/redoc-3.0.1.standalone.js"></script>
</body>
</html>
"#;

/// `GET /docs` and the asset it loads.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/docs", get(|| async { Html(PAGE) }))
        .route(REDOC_PATH, get(|| async { redoc() }))
}

fn redoc() -> impl IntoResponse {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/javascript; charset=utf-8"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        REDOC_JS,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_loads_the_pinned_bundle() {
        assert!(super::PAGE.contains(super::REDOC_PATH));
        assert!(super::REDOC_PATH.contains(super::REDOC_VERSION));
    }
}
