//! The HTTP application: routes, the OpenAPI document and UI, and the
//! middleware every request passes (see `middleware`).

use axum::{Router, extract::DefaultBodyLimit, http::StatusCode, middleware, response::IntoResponse};
use tower_http::catch_panic::CatchPanicLayer;

use crate::{
    error::ApiError,
    mcp,
    middleware::{
        access_log,
        body_buffer::{self, BodyBuffer},
        json_errors, metrics, rate_limit,
        request_limits::{self, RequestLimits},
        run_to_completion, timeout,
    },
    request_id, routes,
    state::AppState,
};

pub fn app(state: AppState) -> Router {
    let (router, openapi) = routes::router().split_for_parts();
    let spec = routes::complete(openapi);
    let limits = &state.config.limits;
    let max_body = limits.max_body_bytes;
    let buffer = BodyBuffer::new(limits.max_buffered_body_bytes, max_body, limits.body_read_timeout);
    let request_timeout = limits.request_timeout;
    let request_limits = RequestLimits::from(limits);
    let rate_limiter = state.rate_limiter.clone();
    router
        .route(
            "/openapi.json",
            axum::routing::get(move || async move { axum::Json(spec) }),
        )
        .merge(crate::docs::router())
        .merge(mcp::router(&state))
        .merge(crate::dashboard::router())
        .merge(crate::auth::oidc::router())
        .merge(crate::auth::cli_login::router())
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
        .layer(middleware::from_fn(run_to_completion::middleware))
        .layer(middleware::from_fn_with_state(buffer, body_buffer::middleware))
        .layer(middleware::from_fn_with_state(
            request_timeout,
            timeout::middleware,
        ))
        .layer(middleware::from_fn_with_state(
            request_limits,
            request_limits::middleware,
        ))
        .layer(middleware::from_fn_with_state(
            rate_limiter,
            rate_limit::middleware,
        ))
        .layer(middleware::from_fn(json_errors::middleware))
        .layer(middleware::from_fn(metrics::middleware))
        .layer(access_log::layer())
        .layer(middleware::from_fn(request_id::middleware))
        .with_state(state)
}
