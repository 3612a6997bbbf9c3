//! The telemetry tests in a test binary of their own: the trace test sets a
//! thread-scoped subscriber, which other tests running beside it in one
//! process (and registering the same callsites) made unreliable.

#[allow(dead_code)]
#[path = "generator/support.rs"]
mod support;
#[path = "generator/telemetry.rs"]
mod telemetry;
