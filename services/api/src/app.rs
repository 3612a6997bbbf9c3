//! The HTTP application: routes, the OpenAPI document and UI, and the
//! middleware every request passes (request id, tracing, body limit, panics).

use axum::{Router, extract::DefaultBodyLimit, http::StatusCode, middleware, response::IntoResponse};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_scalar::{Scalar, Servable};

use crate::{error::ApiError, mcp, request_id, routes, state::AppState};

pub fn app(state: AppState) -> Router {
    let (router, openapi) = routes::router().split_for_parts();
    let max_body = state.config.limits.max_body_bytes;
    let spec = openapi.clone();
    router
        .route(
            "/openapi.json",
            axum::routing::get(move || async move { axum::Json(spec) }),
        )
        .merge(Scalar::with_url("/docs", openapi))
        .merge(mcp::router(&state))
        .fallback(|| async { ApiError::not_found("route_not_found", "no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this route",
            )
        })
        .layer(DefaultBodyLimit::max(max_body))
        .layer(CatchPanicLayer::custom(|_| ApiError::internal().into_response()))
        .layer(middleware::from_fn(request_id::middleware))
        .with_state(state)
}
