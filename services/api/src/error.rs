//! The HTTP error type. Every failure answers `{"error":{"code","message","requestId"}}`.
//! It is the engine's error (`cairn_core::Error`: a status, a stable code
//! and a message) given an HTTP body, with `Retry-After` on 429 and 503.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header::RETRY_AFTER},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::request_id;

/// `cairn_core::Error` as an HTTP answer.
#[derive(Debug)]
pub struct ApiError(pub cairn_core::Error);

pub type ApiResult<T> = Result<T, ApiError>;

impl std::ops::Deref for ApiError {
    type Target = cairn_core::Error;
    fn deref(&self) -> &cairn_core::Error {
        &self.0
    }
}

impl From<cairn_core::Error> for ApiError {
    fn from(err: cairn_core::Error) -> Self {
        Self(err)
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        Self(err.into())
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        Self(err.into())
    }
}

/// The engine's constructors, answering as HTTP errors.
macro_rules! constructors {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        impl ApiError {
            $(pub fn $name($($arg: $ty),*) -> Self {
                Self(cairn_core::Error::$name($($arg),*))
            })*
        }
    };
}

constructors! {
    new(status: StatusCode, code: &'static str, message: impl Into<String>);
    bad_request(code: &'static str, message: impl Into<String>);
    unprocessable(code: &'static str, message: impl Into<String>);
    unauthorized(message: impl Into<String>);
    forbidden(code: &'static str, message: impl Into<String>);
    not_found(code: &'static str, message: impl Into<String>);
    conflict(code: &'static str, message: impl Into<String>);
    unavailable(message: impl Into<String>);
    too_many_requests(retry_after: u64);
    internal();
}

impl ApiError {
    pub fn retry_after(self, seconds: u64) -> Self {
        Self(self.0.retry_after(seconds))
    }
}

/// The error body, as documented in the OpenAPI spec.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetail {
    /// Stable, machine-readable code such as `invalid_json` or `project_not_found`.
    pub code: String,
    pub message: String,
    pub request_id: Option<String>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(this) = self;
        let body = ErrorBody {
            error: ErrorDetail {
                code: this.code.to_string(),
                message: this.message,
                request_id: request_id::current(),
            },
        };
        let mut response = (this.status, Json(body)).into_response();
        if let Some(seconds) = this.retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
