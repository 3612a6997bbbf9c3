//! The HTTP error type. Every failure answers `{"error":{"code","message","requestId"}}`.
//!
//! Use the constructors for what the client can fix (`bad_request`, `not_found`,
//! `forbidden`, `conflict`, …) with a stable machine-readable `code`. Anything else
//! (a database or internal error) goes through `From`, is logged, and answers 500,
//! or 503 when Postgres is unreachable.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::request_id;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "missing_credentials", message)
    }
    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal server error",
        )
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => {
                tracing::error!(error = %err, "database unavailable");
                Self::unavailable("the database is unavailable; retry later")
            }
            // Text Postgres cannot store (U+0000) in any field.
            sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("22021" | "22P05")) => {
                Self::unprocessable(
                    "invalid_characters",
                    "the request holds a character that cannot be stored (U+0000)",
                )
            }
            // Input that slipped past validation and hit a CHECK or a foreign key.
            sqlx::Error::Database(db)
                if matches!(db.code().as_deref(), Some("23514" | "23503" | "22P02" | "22001")) =>
            {
                tracing::warn!(error = %err, "request refused by a database constraint");
                Self::unprocessable("constraint_violation", "the request violates a data constraint")
            }
            _ => {
                tracing::error!(error = %err, "database error");
                Self::internal()
            }
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        match err.downcast::<sqlx::Error>() {
            Ok(db) => db.into(),
            Err(err) => {
                tracing::error!(error = %format!("{err:#}"), "internal error");
                Self::internal()
            }
        }
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
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
                request_id: request_id::current(),
            },
        };
        (self.status, Json(body)).into_response()
    }
}
