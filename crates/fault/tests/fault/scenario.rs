//! One scenario: a fresh stack, the load, the fault injected while the load
//! runs, the drain, the checks, the report (stdout and bench/out/fault.md),
//! then the verdict.

use std::{
    io::Write,
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant},
};

use crate::{
    bins::workspace_root,
    check::{Report, jobs_pending},
    config::Knobs,
    load::{Load, Shared},
    stack::{DATABASE, Stack},
};

#[derive(Clone, Copy, Debug)]
pub enum Fault {
    KillApi,
    KillGenerator,
    Redis,
    PostgresRestart,
    AbandonedRequests,
    /// Three API processes and two generators; kill -9 of one of each.
    ReplicaSet,
    /// Every connection of the API terminated by Postgres, over and over.
    ApiConnectionsTerminated,
}

impl Fault {
    pub fn label(self) -> &'static str {
        match self {
            Fault::KillApi => "api-kill",
            Fault::KillGenerator => "generator-kill",
            Fault::Redis => "redis-outage",
            Fault::PostgresRestart => "postgres-restart",
            Fault::AbandonedRequests => "abandoned-requests",
            Fault::ReplicaSet => "replica-set",
            Fault::ApiConnectionsTerminated => "api-connections-terminated",
        }
    }
}

/// Scenarios run one at a time even when the test harness runs tests in
/// parallel: each starts a whole stack, and they share two cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub async fn run(fault: Fault) {
    let _serial = SERIAL.lock().await;
    let knobs = Knobs::from_env();
    let started = Instant::now();
    let mut stack = Stack::start(fault.label()).await;
    if let Fault::ReplicaSet = fault {
        stack.start_replicas(2, 1).await;
    }
    let load = Load::start(
        &stack.bases(),
        stack.api_port,
        &stack.ingest_token,
        fault.label(),
        &knobs,
    );
    let shared = load.shared.clone();
    let started_load = Instant::now();
    let mut faults = vec![];
    inject(fault, &mut stack, &shared, &knobs, &mut faults).await;
    // Let the load finish, restarting anything that died on its own.
    while !shared.done() {
        stack.supervise().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (ledger, mut stats) = load.finish().await;
    let load_time = started_load.elapsed();
    if let Fault::AbandonedRequests = fault {
        // A last burst with nothing after it: stored events sent again, each
        // abandoned 1–3 times and then sent normally, and a last few only
        // abandoned. A pooled connection left inside a transaction is then
        // seldom picked up by a later request, so the idle-in-transaction
        // check below sees it. Only events that name themselves (an
        // Idempotency-Key, or a tool event's tool_use_id) are sent again: an
        // id-less prompt or Stop sent after its turn ended is, by design, a
        // new one.
        let replays: Vec<_> = ledger
            .events
            .iter()
            .filter(|e| e.answered && (e.key.is_some() || e.hook == "PostToolUse"))
            .take(knobs.events / 4)
            .cloned()
            .collect();
        let (sent, dropped) = replays.split_at(replays.len() * 2 / 3);
        let (base, port, token) = (&stack.base, stack.api_port, &stack.ingest_token);
        let tail = Load::replay_abandoned(base, port, token, sent, &knobs, knobs.clients, true).await;
        stats.merge(&tail);
        let last = Load::replay_abandoned(base, port, token, dropped, &knobs, knobs.clients, false).await;
        stats.merge(&last);
        faults.push(format!(
            "after the load: {} stored events sent again the same way and {} only abandoned ({} requests \
             abandoned), nothing after them",
            sent.len(),
            dropped.len(),
            tail.abandoned + last.abandoned
        ));
    }

    let pool = stack.observer().await;
    let drain_started = Instant::now();
    let mut drained_in = None;
    while drain_started.elapsed() < knobs.drain {
        stack.supervise().await;
        if jobs_pending(&pool).await == Some(0) {
            drained_in = Some(drain_started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let mut report = Report {
        scenario: fault.label().to_string(),
        stats,
        faults,
        drained_in,
        load_time,
        ..Default::default()
    };
    report.gather(&pool, DATABASE, &ledger).await;
    pool.close().await;
    report.unexpected_exits = stack.unexpected_exits.clone();
    report.read_logs(&stack.pg.log, &stack.service_logs());
    report.elapsed = started.elapsed();

    let rendered = report.render();
    println!("\n### fault scenario: {}\n\n{rendered}", fault.label());
    let saved = save(fault, &rendered, &stack);
    println!("(appended to {saved})");
    drop(stack);

    let failures = report.failures();
    assert!(
        failures.is_empty(),
        "fault scenario `{}` failed (table and evidence above, and in bench/out/fault.md):\n- {}",
        fault.label(),
        failures.join("\n- ")
    );
}

/// Waits for the load to reach `fraction` of its events (or to end),
/// restarting processes that exit on their own meanwhile.
async fn at_progress(stack: &mut Stack, shared: &Shared, fraction: f64) {
    while shared.progress() < fraction && !shared.done() {
        stack.supervise().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Mid-work: waits (briefly) until a job is held; how many are.
async fn wait_for_held_job(pool: &sqlx::PgPool) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut holding = 0i64;
    while Instant::now() < deadline {
        holding = sqlx::query_scalar("SELECT count(*) FROM generation_jobs WHERE status = 'processing'")
            .fetch_one(pool)
            .await
            .unwrap_or(0);
        if holding > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    holding
}

fn pct(shared: &Shared) -> String {
    format!("{:.0}%", shared.progress() * 100.0)
}

async fn inject(
    fault: Fault,
    stack: &mut Stack,
    shared: &Arc<Shared>,
    knobs: &Knobs,
    faults: &mut Vec<String>,
) {
    let step = |i: usize| (i + 1) as f64 / (knobs.repeat + 1) as f64;
    match fault {
        Fault::KillApi => {
            for i in 0..knobs.repeat {
                at_progress(stack, shared, step(i)).await;
                let at = pct(shared);
                stack.kill_api();
                tokio::time::sleep(knobs.down).await;
                stack.start_api().await;
                faults.push(format!(
                    "kill -9 cairn-api at {at}, restarted after {:?}",
                    knobs.down
                ));
            }
        }
        Fault::ReplicaSet => {
            let pool = stack.observer().await;
            for i in 0..knobs.repeat {
                at_progress(stack, shared, step(i)).await;
                let at = pct(shared);
                let holding = wait_for_held_job(&pool).await;
                stack.kill_api();
                stack.kill_generator();
                tokio::time::sleep(knobs.down).await;
                stack.start_api().await;
                stack.start_generator();
                faults.push(format!(
                    "kill -9 of one of three cairn-api and one of two cairn-generator (holding {holding} of the \
                     jobs in progress) at {at}, restarted after {:?}; clients spread each attempt over the APIs",
                    knobs.down
                ));
            }
            pool.close().await;
        }
        Fault::KillGenerator => {
            let pool = stack.observer().await;
            for i in 0..knobs.repeat {
                at_progress(stack, shared, step(i)).await;
                let holding = wait_for_held_job(&pool).await;
                let at = pct(shared);
                stack.kill_generator();
                tokio::time::sleep(knobs.down).await;
                stack.start_generator();
                faults.push(format!(
                    "kill -9 cairn-generator at {at} holding {holding} jobs, restarted after {:?}",
                    knobs.down
                ));
            }
            pool.close().await;
        }
        Fault::Redis => {
            for i in 0..knobs.repeat {
                let span = 1.0 / knobs.repeat as f64;
                let base = i as f64 * span;
                at_progress(stack, shared, base + span * 0.2).await;
                let at = pct(shared);
                let down_since = Instant::now();
                stack.redis.down();
                at_progress(stack, shared, base + span * 0.5).await;
                if down_since.elapsed() < knobs.down {
                    tokio::time::sleep(knobs.down - down_since.elapsed()).await;
                }
                stack.redis.up().await;
                faults.push(format!(
                    "redis-server killed at {at}, started again at {} after {:.1}s",
                    pct(shared),
                    down_since.elapsed().as_secs_f64()
                ));
                at_progress(stack, shared, base + span * 0.8).await;
                stack.redis.flushall().await;
                faults.push(format!("FLUSHALL at {}", pct(shared)));
            }
        }
        Fault::PostgresRestart => {
            for i in 0..knobs.repeat {
                at_progress(stack, shared, step(i)).await;
                let at = pct(shared);
                let t = Instant::now();
                stack.pg.restart_fast(knobs.down).await;
                faults.push(format!(
                    "pg_ctl stop -m fast at {at}, started again: down {:.1}s",
                    t.elapsed().as_secs_f64()
                ));
            }
        }
        Fault::ApiConnectionsTerminated => {
            // The client side of Postgres cut mid-statement, as a proxy or a
            // network would: group commits in flight fail or commit unseen.
            let pool = stack.observer().await;
            let rounds = knobs.repeat * 4;
            let mut cut = 0i64;
            for i in 0..rounds {
                at_progress(stack, shared, (i + 1) as f64 / (rounds + 1) as f64).await;
                cut += sqlx::query_scalar::<_, i64>(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
                       FROM pg_stat_activity WHERE application_name = 'cairn-api'",
                )
                .fetch_one(&pool)
                .await
                .unwrap_or(0);
            }
            faults.push(format!(
                "every cairn-api connection terminated (pg_terminate_backend) {rounds} times through the load: {cut} in all"
            ));
            pool.close().await;
        }
        Fault::AbandonedRequests => {
            // Three bursts of abandoned requests (each event then sent
            // normally); the load runs without them in between and at the end.
            let windows = [(0.05, 0.25), (0.35, 0.55), (0.65, 0.8)];
            for (from, to) in windows {
                at_progress(stack, shared, from).await;
                shared.abandon.store(true, Ordering::Relaxed);
                let at = pct(shared);
                at_progress(stack, shared, to).await;
                shared.abandon.store(false, Ordering::Relaxed);
                faults.push(format!("abandon burst {at}–{}", pct(shared)));
            }
            let abandoned = shared.stats.lock().unwrap().abandoned;
            faults.push(format!(
                "{abandoned} requests sent and dropped 0–20 ms later (half with a reset), each event then sent normally"
            ));
        }
    }
}

/// Appends the report to bench/out/fault.md and keeps the logs under
/// bench/out/fault/<scenario>/.
fn save(fault: Fault, rendered: &str, stack: &Stack) -> String {
    let out = workspace_root().join("bench/out");
    let logs = out.join("fault").join(fault.label());
    let _ = std::fs::create_dir_all(&logs);
    for (name, path) in stack.logs() {
        let _ = std::fs::copy(&path, logs.join(name));
    }
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into());
    let binaries = std::env::var("CAIRN_FAULT_BIN_DIR")
        .map(|d| format!("binaries from {d}"))
        .unwrap_or_else(|_| format!("commit {commit} and the working tree"));
    let file = out.join("fault.md");
    let text = format!(
        "\n### {} — {} ({binaries}; logs in bench/out/fault/{}/)\n\n{rendered}",
        fault.label(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC"),
        fault.label()
    );
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    match appended {
        Ok(()) => file.display().to_string(),
        Err(e) => format!("nothing: {} could not be written: {e}", file.display()),
    }
}
