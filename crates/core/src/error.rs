//! The engine's error: what the caller can fix (`bad_request`, `not_found`,
//! `conflict`, …) with a stable machine-readable `code` and the HTTP status
//! the server answers it with; anything else (a database or internal error)
//! goes through `From`, is logged, and is a 500, or a 503 with a retry hint
//! when Postgres is unreachable, restarting, or gave up on a statement or a
//! lock in time.

pub use http::StatusCode;

#[derive(Clone, Debug)]
pub struct Error {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds for `Retry-After` (429 and 503).
    pub retry_after: Option<u64>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
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
    /// 503 with `Retry-After`: the client should come back, nothing was lost.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message).retry_after(1)
    }
    pub fn too_many_requests(retry_after: u64) -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "too many requests; retry after the time in Retry-After",
        )
        .retry_after(retry_after.max(1))
    }
    /// The same error, saying `message`.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal server error",
        )
    }
}

impl From<sqlx::Error> for Error {
    fn from(err: sqlx::Error) -> Self {
        let code = match &err {
            sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
            _ => None,
        };
        match (&err, code.as_deref()) {
            (sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed, _) => {
                tracing::error!(error = %err, "database unavailable");
                Self::unavailable("the database is unavailable; retry later")
            }
            // 08: connection exceptions; 57: a restarting or shutting-down
            // server, and statements cancelled by statement_timeout (57014);
            // 55P03: lock_timeout. All pass; none is the client's fault.
            (_, Some(c)) if c.starts_with("08") || c.starts_with("57") || c == "55P03" => {
                tracing::warn!(error = %err, sqlstate = c, "database busy or restarting");
                Self::unavailable("the database is busy or restarting; retry later")
            }
            // Text Postgres cannot store (U+0000) in any field.
            (_, Some("22021" | "22P05")) => Self::unprocessable(
                "invalid_characters",
                "the request holds a character that cannot be stored (U+0000)",
            ),
            // A time outside what Postgres stores (before 4713 BC, after 294276 AD).
            (_, Some("22008")) => {
                Self::unprocessable("invalid_time", "a time in the request is out of range")
            }
            // Input that slipped past validation and hit a CHECK or a foreign key.
            (_, Some("23514" | "23503" | "22P02" | "22001")) => {
                tracing::warn!(error = %err, "request refused by a database constraint");
                Self::unprocessable("constraint_violation", "the request violates a data constraint")
            }
            // A race with a concurrent write (unique, serialization, deadlock):
            // a retry sees the other write. 503 so no client drops the request.
            (_, Some("23505" | "40001" | "40P01")) => {
                tracing::warn!(error = %err, "write raced a concurrent one");
                Self::unavailable("the request raced a concurrent write; retry")
            }
            _ => {
                tracing::error!(error = %err, "database error");
                Self::internal()
            }
        }
    }
}

impl From<anyhow::Error> for Error {
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

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.status.as_u16(), self.message)
    }
}

impl std::error::Error for Error {}
