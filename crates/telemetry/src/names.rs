//! Every metric name and label, in one place (README "Metrics" lists them).

/// Counter: HTTP requests; labels `route` (matched template), `method`, `status`.
pub const HTTP_REQUESTS: &str = "cairn_http_requests_total";
/// Histogram (seconds): HTTP request latency; labels `route`, `method`, `status`.
pub const HTTP_DURATION: &str = "cairn_http_request_duration_seconds";
/// Counter: ingested events; labels `agent`, `kind`.
pub const INGEST_EVENTS: &str = "cairn_ingest_events_total";
/// Counter: events the hook client replayed from its spool (`X-Cairn-Replay`); label `agent`.
pub const INGEST_REPLAYED_EVENTS: &str = "cairn_ingest_replayed_events_total";
/// Histogram: tool events written by one group commit (`ingest/group_commit.rs`).
pub const INGEST_BATCH_EVENTS: &str = "cairn_ingest_batch_events";
/// Counter: job state transitions; labels `from`, `to`, `transition`.
pub const JOB_TRANSITIONS: &str = "cairn_job_transitions_total";
/// Histogram (seconds): claim to outcome of one attempt; labels `job_type`, `outcome`.
pub const JOB_DURATION: &str = "cairn_job_claim_to_complete_seconds";
/// Counter: provider calls; labels `provider`, `outcome` (`ok` or an error class).
pub const PROVIDER_CALLS: &str = "cairn_provider_calls_total";
/// Counter: provider tokens; labels `provider`, `kind` (`input`, `output`, `cached`).
pub const PROVIDER_TOKENS: &str = "cairn_provider_tokens_total";
/// Gauge: jobs by status; label `status`.
pub const QUEUE_DEPTH: &str = "cairn_queue_jobs";
/// Gauge (seconds): age of the oldest due queued job (0 when none).
pub const QUEUE_OLDEST_DUE: &str = "cairn_queue_oldest_due_seconds";
/// Gauges: database pool connections open and idle; label `service`.
pub const DB_POOL_SIZE: &str = "cairn_db_pool_connections";
pub const DB_POOL_IDLE: &str = "cairn_db_pool_idle_connections";
