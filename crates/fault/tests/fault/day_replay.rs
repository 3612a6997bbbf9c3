//! The load model checked (bench/README.md, "A load model"): the peak hour
//! of a 100-developer team, replayed at 10× against a replica set (three
//! `cairn-api` processes, two `cairn-generator`s with the `heuristic`
//! provider, one Postgres, one Redis). Not a fault scenario: it is ignored in
//! the suite and run by `bench/day_replay.sh`.
//!
//! Each developer works in turns, as the model assumes: 15 turns in the peak
//! hour (twice the 8-hour day's mean of 60), a session every 10 turns, 10
//! tool calls a turn sent as PreToolUse and PostToolUse (a ~1.5 KB
//! response), a prompt first and Stop last; so 22 events a turn. A turn's
//! events are spread over the first two thirds of its period; developers
//! start at evenly spread offsets. Requests go to the API processes in
//! turn. At the end each session gets SessionEnd and the jobs drain.
//!
//! Reported: events sent and answered, the hook requests' latency, the lag
//! from a turn's Stop (its event's `received_at`) to its turn summary
//! (`created_at`, both Postgres's clock), and the generation queue sampled
//! every second (jobs queued and due, jobs processing).
//!
//! Knobs: `CAIRN_REPLAY_DEVELOPERS` (100), `CAIRN_REPLAY_SPEED` (10),
//! `CAIRN_REPLAY_MINUTES` (60: minutes of the day replayed),
//! `CAIRN_REPLAY_TURNS_PER_HOUR` (15), `CAIRN_REPLAY_TOOLS` (10).

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use sqlx::PgPool;

use crate::stack::Stack;

fn knob(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

struct Plan {
    developers: usize,
    speed: f64,
    minutes: f64,
    turns_per_hour: f64,
    tools: usize,
}

impl Plan {
    fn from_env() -> Plan {
        Plan {
            developers: knob("CAIRN_REPLAY_DEVELOPERS", 100.0) as usize,
            speed: knob("CAIRN_REPLAY_SPEED", 10.0).max(0.1),
            minutes: knob("CAIRN_REPLAY_MINUTES", 60.0).max(1.0),
            turns_per_hour: knob("CAIRN_REPLAY_TURNS_PER_HOUR", 15.0).max(0.1),
            tools: knob("CAIRN_REPLAY_TOOLS", 10.0) as usize,
        }
    }
    /// One turn's period, in real time.
    fn turn_period(&self) -> Duration {
        Duration::from_secs_f64(3600.0 / self.turns_per_hour / self.speed)
    }
    fn replay(&self) -> Duration {
        Duration::from_secs_f64(self.minutes * 60.0 / self.speed)
    }
}

#[derive(Default)]
struct Tally {
    sent: AtomicUsize,
    answered: AtomicUsize,
    latencies_ms: Mutex<Vec<f64>>,
    failures: Mutex<Vec<String>>,
}

struct Sender {
    http: reqwest::Client,
    bases: Vec<String>,
    token: String,
    next: AtomicUsize,
    tally: Tally,
}

impl Sender {
    async fn send(&self, body: Value) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len();
        let url = format!("{}/v1/hooks/claude-code", self.bases[i]);
        self.tally.sent.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let res = self
            .http
            .post(&url)
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        match res {
            Ok(r) if r.status().is_success() => {
                self.tally.answered.fetch_add(1, Ordering::Relaxed);
                self.tally.latencies_ms.lock().unwrap().push(ms);
            }
            Ok(r) => self
                .tally
                .failures
                .lock()
                .unwrap()
                .push(format!("{url}: {}", r.status())),
            Err(e) => self.tally.failures.lock().unwrap().push(format!("{url}: {e}")),
        }
    }
}

fn hook(session: &str, hook: &str, extra: Value) -> Value {
    let mut body = json!({
        "session_id": session,
        "transcript_path": format!("/home/dev/.claude/projects/app/{session}.jsonl"),
        "cwd": "/home/dev/app",
        "hook_event_name": hook,
        "permission_mode": "default",
    });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    body
}

/// One developer's replay: turns on a fixed period from `offset`.
async fn developer(sender: Arc<Sender>, plan: Arc<Plan>, dev: usize, offset: Duration) {
    let start = Instant::now() + offset;
    let period = plan.turn_period();
    let end = Instant::now() + plan.replay();
    let response = "test result: ok. ".repeat(90);
    let mut session = String::new();
    let mut turn = 0usize;
    loop {
        let turn_start = start + period * turn as u32;
        if turn_start >= end {
            break;
        }
        tokio::time::sleep_until(turn_start.into()).await;
        if turn.is_multiple_of(10) {
            if !session.is_empty() {
                sender
                    .send(hook(&session, "SessionEnd", json!({"reason": "other"})))
                    .await;
            }
            session = format!("replay-dev{dev}-s{}", turn / 10);
            sender
                .send(hook(&session, "SessionStart", json!({"source": "startup"})))
                .await;
        }
        let prompt = format!("Developer {dev}, turn {turn}: make the parser accept trailing commas");
        sender
            .send(hook(&session, "UserPromptSubmit", json!({"prompt": prompt})))
            .await;
        // The turn's events over the first two thirds of its period.
        let step = period * 2 / 3 / (plan.tools as u32 + 1);
        for tool in 0..plan.tools {
            tokio::time::sleep_until((turn_start + step * (tool as u32 + 1)).into()).await;
            let id = format!("toolu_replay_{dev}_{turn}_{tool}");
            let input = json!({"command": format!("cargo test -p parser case_{tool}"), "description": "Run one test"});
            sender
                .send(hook(
                    &session,
                    "PreToolUse",
                    json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": input}),
                ))
                .await;
            sender
                .send(hook(
                    &session,
                    "PostToolUse",
                    json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": input,
                           "tool_response": {"stdout": response, "stderr": "", "interrupted": false}}),
                ))
                .await;
        }
        sender
            .send(hook(&session, "Stop", json!({"stop_hook_active": false})))
            .await;
        turn += 1;
    }
    if !session.is_empty() {
        sender
            .send(hook(&session, "SessionEnd", json!({"reason": "other"})))
            .await;
    }
}

/// (queued and due, processing) jobs, now.
async fn queue(db: &PgPool) -> (i64, i64) {
    sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'queued' AND next_attempt_at <= now()),
                count(*) FILTER (WHERE status = 'processing')
           FROM generation_jobs",
    )
    .fetch_one(db)
    .await
    .unwrap_or((-1, -1))
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

pub async fn run() {
    let plan = Arc::new(Plan::from_env());
    let mut stack = Stack::start("day-replay").await;
    stack.start_replicas(2, 1).await;
    let db = stack.observer().await;
    let sender = Arc::new(Sender {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        bases: stack.bases(),
        token: stack.ingest_token.clone(),
        next: AtomicUsize::new(0),
        tally: Tally::default(),
    });
    eprintln!(
        "day replay: {} developers, {} min of the day at {}× ({:.0} s), a turn every {:.1} s, {} tools a turn, {} API processes",
        plan.developers,
        plan.minutes,
        plan.speed,
        plan.replay().as_secs_f64(),
        plan.turn_period().as_secs_f64(),
        plan.tools,
        stack.bases().len()
    );

    let started = Instant::now();
    let devs: Vec<_> = (0..plan.developers)
        .map(|dev| {
            let offset = plan.turn_period() * dev as u32 / plan.developers as u32;
            tokio::spawn(developer(sender.clone(), plan.clone(), dev, offset))
        })
        .collect();
    let mut samples: Vec<(i64, i64)> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    while !devs.iter().all(|d| d.is_finished()) {
        tick.tick().await;
        samples.push(queue(&db).await);
    }
    let load_secs = started.elapsed().as_secs_f64();
    // Drain: every job done (or the deadline).
    let drain_started = Instant::now();
    let mut drained_in = None;
    while drain_started.elapsed() < Duration::from_secs(300) {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM generation_jobs WHERE status IN ('queued', 'processing')",
        )
        .fetch_one(&db)
        .await
        .unwrap();
        if open == 0 {
            drained_in = Some(drain_started.elapsed().as_secs_f64());
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    let lags: Vec<f64> = sqlx::query_scalar(
        "SELECT (extract(epoch FROM (su.created_at - e.received_at)) * 1000)::float8
           FROM summaries su
           JOIN agent_events e ON e.session_id = su.session_id AND e.prompt_number = su.prompt_number
                               AND e.event_type = 'Stop'
          WHERE su.scope = 'turn'",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let (events, turns, stops): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM agent_events),
                (SELECT count(*) FROM summaries WHERE scope = 'turn'),
                (SELECT count(*) FROM agent_events WHERE event_type = 'Stop')",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    let jobs: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT job_type, status, count(*) FROM generation_jobs GROUP BY 1, 2 ORDER BY 1, 2")
            .fetch_all(&db)
            .await
            .unwrap();
    stack.supervise().await;

    let tally = &sender.tally;
    let latencies = sorted(tally.latencies_ms.lock().unwrap().clone());
    let lags = sorted(lags);
    let due = sorted(samples.iter().map(|s| s.0 as f64).collect());
    let processing = sorted(samples.iter().map(|s| s.1 as f64).collect());
    let sent = tally.sent.load(Ordering::Relaxed);
    let answered = tally.answered.load(Ordering::Relaxed);
    println!("| quantity | value |");
    println!("|---|---|");
    println!(
        "| developers, replayed, speed | {}, {} min of the peak hour, {}× ({load_secs:.0} s) |",
        plan.developers, plan.minutes, plan.speed
    );
    println!(
        "| events sent / answered 2xx / stored | {sent} / {answered} / {events} ({:.1}/s) |",
        answered as f64 / load_secs
    );
    println!(
        "| hook request latency p50 / p99 / max (ms) | {:.1} / {:.1} / {:.1} |",
        quantile(&latencies, 0.5),
        quantile(&latencies, 0.99),
        quantile(&latencies, 1.0)
    );
    println!("| turns (Stop) / turn summaries | {stops} / {turns} |");
    println!(
        "| Stop → turn summary p50 / p95 / p99 / max (ms) | {:.0} / {:.0} / {:.0} / {:.0} |",
        quantile(&lags, 0.5),
        quantile(&lags, 0.95),
        quantile(&lags, 0.99),
        quantile(&lags, 1.0)
    );
    println!(
        "| jobs queued and due, sampled each second: p50 / max | {:.0} / {:.0} |",
        quantile(&due, 0.5),
        quantile(&due, 1.0)
    );
    println!(
        "| jobs processing: p50 / max | {:.0} / {:.0} |",
        quantile(&processing, 0.5),
        quantile(&processing, 1.0)
    );
    println!(
        "| drained after the load | {} |",
        drained_in.map_or("not within 300 s".to_string(), |s| format!("{s:.1} s"))
    );
    println!(
        "| jobs by type and status | {} |",
        jobs.iter()
            .map(|(t, s, n)| format!("{t} {s}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "| processes that exited on their own | {} |",
        stack.unexpected_exits.len()
    );
    let failures = tally.failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} requests failed, first: {:?}",
        failures.len(),
        failures.first()
    );
    assert_eq!(answered as i64, events, "every answered event is stored once");
    assert_eq!(stops, turns, "every turn got its summary");
    assert!(drained_in.is_some(), "the queue did not drain");
}
