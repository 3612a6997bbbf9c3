//! The fault suite (see crates/fault/README.md). Each scenario starts its own
//! Postgres cluster and redis-server, the real `cairn-api` and
//! `cairn-generator` binaries against them, plays Claude Code sessions
//! through the API while injecting one fault, drains the jobs, and checks:
//! every event answered 2xx stored exactly once, no phantom turns, every job
//! completed exactly once, no transaction left open, no 500.
//!
//! `scripts/fault.sh` runs it with the tables on stdout; they are also
//! appended to bench/out/fault.md.

mod bins;
mod check;
mod config;
mod day_replay;
mod load;
mod postgres;
mod procs;
mod redis;
mod scenario;
mod stack;

use scenario::{Fault, run};

/// kill -9 of the API under load, clients retrying (with and without
/// Idempotency-Key), the API started again on the same port.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_killed_under_load() {
    run(Fault::KillApi).await;
}

/// kill -9 of the generator while it holds jobs, started again: leases are
/// rescued and each job completes once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn generator_killed_mid_work() {
    run(Fault::KillGenerator).await;
}

/// Redis killed and started again, then FLUSHALL, during the load:
/// ingestion goes on and the sweeper finds every job.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_stopped_and_flushed() {
    run(Fault::Redis).await;
}

/// Postgres restarted (`pg_ctl stop -m fast`, then started) during the load.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restarted_under_load() {
    run(Fault::PostgresRestart).await;
}

/// Bursts of requests dropped 0–20 ms after they were sent, each followed by
/// a normal retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn abandoned_requests() {
    run(Fault::AbandonedRequests).await;
}

/// Three API processes and two generators on one Postgres and one Redis,
/// each request sent to the next API: kill -9 of one API and one generator
/// (while it holds a job) under load, started again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replica_set_api_and_generator_killed() {
    run(Fault::ReplicaSet).await;
}

/// Every connection the API holds to Postgres terminated by the server,
/// eight times through the load: batches of tool events (group commit) cut
/// before, during or after their commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_connections_terminated_under_load() {
    run(Fault::ApiConnectionsTerminated).await;
}

/// Not a fault: the peak hour of a 100-developer team at 10× against the
/// replica set, with its lag and queue figures (`bench/day_replay.sh`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a bench of several minutes: bench/day_replay.sh"]
async fn day_replay() {
    day_replay::run().await;
}
