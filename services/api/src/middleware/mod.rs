//! The layers every request passes before a handler, outermost first:
//! request id → access log (`TraceLayer`) → HTTP metrics → JSON error bodies → rate limits → request limits (URI and
//! headers) → request timeout → body buffering (bounded) → run to completion
//! (a spawned task a disconnect cannot cancel) → panic guard → routes.

pub mod access_log;
pub mod body_buffer;
pub mod json_errors;
pub mod metrics;
pub mod rate_limit;
pub mod request_limits;
pub mod run_to_completion;
pub mod timeout;
