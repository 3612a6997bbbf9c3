//! The admin dashboard served at `/`: a small single-page app (plain ES
//! modules and one stylesheet, built into the binary) that calls the JSON API
//! with a cookie session. Not part of the OpenAPI document.

mod assets;
mod headers;
pub(crate) mod session;
pub(crate) mod settings;

use axum::{Router, routing::get};

use crate::state::AppState;

/// `/`, `/assets/{version}/{file}` and `/dashboard/session`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{version}/{file}", get(assets::asset))
        .route("/assets/{version}/pages/{file}", get(assets::page_asset))
        .route(
            "/dashboard/session",
            get(session::current)
                .post(session::sign_in)
                .delete(session::sign_out),
        )
        .layer(axum::middleware::from_fn(headers::middleware))
}
