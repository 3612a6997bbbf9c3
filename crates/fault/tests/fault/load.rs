//! The load: clients playing Claude Code sessions against the API, each
//! event retried until it is answered 2xx. Half the sessions send an
//! `Idempotency-Key` on every event (like `cairn hook`); the others send
//! none, like Claude Code's own `http` hooks: tool events carry their
//! `tool_use_id`, prompts, Stop and session events carry no id at all.
//! Every event holds a unique marker, so the checks can count its rows.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rand::Rng;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::config::Knobs;

pub const HOOK_PATH: &str = "/v1/hooks/claude-code";

/// The marker's shape, for the checks' regular expression.
pub const MARKER_REGEX: &str = "fmk-[0-9a-f]{8}-[0-9]+-[0-9]+";

/// One logical event, as the client saw it.
#[derive(Clone, Debug)]
pub struct SentEvent {
    pub marker: String,
    pub session: String,
    pub hook: &'static str,
    /// Answered 2xx (on some attempt).
    pub answered: bool,
    /// When the attempt answered 2xx was sent (Unix seconds): a row received
    /// before it was stored by an earlier attempt whose answer was lost.
    pub answered_attempt_at: Option<f64>,
    /// The request as sent, for replays.
    pub body: Vec<u8>,
    pub key: Option<String>,
}

#[derive(Clone, Debug)]
pub struct SentSession {
    pub external_id: String,
    pub keyed: bool,
    /// Distinct prompts sent (each retried until 2xx or the deadline).
    pub prompts: i64,
}

#[derive(Default, Debug)]
pub struct Ledger {
    pub events: Vec<SentEvent>,
    pub sessions: Vec<SentSession>,
}

/// What the clients saw besides 2xx answers.
#[derive(Default, Debug, Clone)]
pub struct Stats {
    /// Non-2xx answers by status.
    pub statuses: BTreeMap<u16, u64>,
    /// Connection refused, reset, or closed before an answer.
    pub conn_errors: u64,
    pub timeouts: u64,
    /// Requests sent and dropped before their answer (scenario 5).
    pub abandoned: u64,
    /// Events refused with a 4xx (never retried): a harness or server bug.
    pub refused: Vec<String>,
    /// Events that needed more than one attempt (their first answer was lost or not 2xx).
    pub retried_events: u64,
}

impl Stats {
    pub fn merge(&mut self, other: &Stats) {
        for (k, v) in &other.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
        self.conn_errors += other.conn_errors;
        self.timeouts += other.timeouts;
        self.abandoned += other.abandoned;
        self.refused.extend(other.refused.iter().cloned());
        self.retried_events += other.retried_events;
    }
}

/// Shared between the clients and the scenario driver.
pub struct Shared {
    pub planned: u64,
    pub answered: AtomicU64,
    /// While set, each event is first sent and abandoned 1–3 times.
    pub abandon: AtomicBool,
    pub stats: Mutex<Stats>,
    pub clients: usize,
    pub clients_done: AtomicUsize,
}

impl Shared {
    pub fn progress(&self) -> f64 {
        self.answered.load(Ordering::Relaxed) as f64 / self.planned.max(1) as f64
    }

    /// Every client has played all its sessions.
    pub fn done(&self) -> bool {
        self.clients_done.load(Ordering::Relaxed) >= self.clients
    }
}

pub struct Load {
    pub shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<Ledger>>,
}

#[derive(Clone)]
struct Target {
    /// Every API replica; each attempt goes to the next one, as a load
    /// balancer would spread them (a retry after a dead replica lands on
    /// another).
    bases: Arc<Vec<String>>,
    next: Arc<AtomicUsize>,
    /// The first replica's port, for requests abandoned over a raw socket.
    port: u16,
    token: String,
    http: reqwest::Client,
}

impl Target {
    fn base(&self) -> &str {
        &self.bases[self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len()]
    }

    fn new(bases: &[String], port: u16, token: &str, knobs: &Knobs) -> Target {
        let http = reqwest::Client::builder()
            .timeout(knobs.request_timeout)
            .connect_timeout(Duration::from_secs(1))
            .build()
            .expect("http client");
        Target {
            bases: Arc::new(bases.to_vec()),
            next: Arc::new(AtomicUsize::new(0)),
            port,
            token: token.to_string(),
            http,
        }
    }
}

/// One session's events: SessionStart, then per turn a prompt, tool
/// events and Stop, then SessionEnd.
fn session_events(
    run: &str,
    session_no: usize,
    external_id: &str,
    knobs: &Knobs,
) -> Vec<(&'static str, Value)> {
    let mut n = 0usize;
    let mut marker = || {
        n += 1;
        format!("fmk-{run}-{session_no}-{n}")
    };
    let base = |hook: &str, m: &str| {
        json!({
            "session_id": external_id,
            "transcript_path": format!("/home/dev/.claude/projects/app/{external_id}.jsonl"),
            "cwd": "/home/dev/app",
            "hook_event_name": hook,
            "permission_mode": "default",
            "fault_marker": m,
        })
    };
    let with = |mut body: Value, extra: Value| {
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().cloned().unwrap_or_default());
        body
    };
    let mut out = Vec::new();
    let m = marker();
    out.push((
        "SessionStart",
        with(base("SessionStart", &m), json!({"source": "startup"})),
    ));
    for turn in 1..=knobs.turns {
        let m = marker();
        out.push((
            "UserPromptSubmit",
            with(
                base("UserPromptSubmit", &m),
                json!({"prompt": format!("Turn {turn}: fix the failing parser test ({m})")}),
            ),
        ));
        for tool in 0..knobs.tools {
            let m = marker();
            let (name, input, response) = match tool % 3 {
                0 => (
                    "Read",
                    json!({"file_path": format!("src/parser_{turn}.rs"), "description": m}),
                    json!({"content": "fn parse() {}"}),
                ),
                1 => (
                    "Bash",
                    json!({"command": "cargo test parser", "description": m}),
                    json!({"stdout": "test result: ok. 3 passed", "stderr": ""}),
                ),
                _ => (
                    "Edit",
                    json!({"file_path": format!("src/parser_{turn}.rs"), "old_string": "a",
                           "new_string": "b", "description": m}),
                    json!({"ok": true}),
                ),
            };
            out.push((
                "PostToolUse",
                with(
                    base("PostToolUse", &m),
                    json!({"tool_name": name, "tool_use_id": format!("toolu_{m}"),
                           "tool_input": input, "tool_response": response}),
                ),
            ));
        }
        let m = marker();
        out.push((
            "Stop",
            with(
                base("Stop", &m),
                json!({"stop_hook_active": false,
                       "last_assistant_message": format!("Fixed the parser in turn {turn} ({m})")}),
            ),
        ));
    }
    let m = marker();
    out.push((
        "SessionEnd",
        with(base("SessionEnd", &m), json!({"reason": "exit"})),
    ));
    out
}

pub fn events_per_session(knobs: &Knobs) -> usize {
    2 + knobs.turns * (2 + knobs.tools)
}

impl Load {
    /// Starts the clients against the API replicas `bases` (the first on
    /// `port`); `label` names the sessions.
    pub fn start(bases: &[String], port: u16, token: &str, label: &str, knobs: &Knobs) -> Load {
        let per_session = events_per_session(knobs);
        let sessions = knobs.events.div_ceil(per_session).max(1);
        let clients = knobs.clients.clamp(1, sessions);
        let shared = Arc::new(Shared {
            planned: (sessions * per_session) as u64,
            answered: AtomicU64::new(0),
            abandon: AtomicBool::new(false),
            stats: Mutex::new(Stats::default()),
            clients,
            clients_done: AtomicUsize::new(0),
        });
        let target = Target::new(bases, port, token, knobs);
        let run: String = (0..4).map(|_| format!("{:02x}", rand::random::<u8>())).collect();
        let tasks = (0..clients)
            .map(|c| {
                let mine: Vec<usize> = (0..sessions).filter(|s| s % clients == c).collect();
                let (target, shared, knobs, run) =
                    (target.clone(), shared.clone(), knobs.clone(), run.clone());
                let label = label.to_string();
                tokio::spawn(async move {
                    let mut ledger = Ledger::default();
                    for s in mine {
                        play_session(&target, &shared, &knobs, &run, &label, s, &mut ledger).await;
                    }
                    shared.clients_done.fetch_add(1, Ordering::Relaxed);
                    ledger
                })
            })
            .collect();
        Load { shared, tasks }
    }

    /// Sends `events` again, `concurrency` at a time, each abandoned 1–3
    /// times and then, when `then_send`, sent until answered, as in an
    /// abandon burst. The events are stored already: every answer must be a
    /// duplicate's.
    pub async fn replay_abandoned(
        base: &str,
        port: u16,
        token: &str,
        events: &[SentEvent],
        knobs: &Knobs,
        concurrency: usize,
        then_send: bool,
    ) -> Stats {
        let target = Target::new(&[base.to_string()], port, token, knobs);
        let shared = Arc::new(Shared {
            planned: events.len() as u64,
            answered: AtomicU64::new(0),
            abandon: AtomicBool::new(true),
            stats: Mutex::new(Stats::default()),
            clients: concurrency,
            clients_done: AtomicUsize::new(0),
        });
        let queue = Arc::new(Mutex::new(events.to_vec()));
        let workers: Vec<_> = (0..concurrency.max(1))
            .map(|_| {
                let (target, shared, queue, knobs) =
                    (target.clone(), shared.clone(), queue.clone(), knobs.clone());
                tokio::spawn(async move {
                    loop {
                        let Some(e) = queue.lock().unwrap().pop() else {
                            break;
                        };
                        if then_send {
                            send_until_2xx(&target, &shared, &knobs, &e.body, e.key.as_deref()).await;
                        } else {
                            abandon_some(&target, &shared, &e.body, e.key.as_deref()).await;
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.await;
        }
        shared.stats.lock().unwrap().clone()
    }

    /// Waits for every client to finish its sessions.
    pub async fn finish(self) -> (Ledger, Stats) {
        let mut ledger = Ledger::default();
        for t in self.tasks {
            let part = t.await.expect("client task");
            ledger.events.extend(part.events);
            ledger.sessions.extend(part.sessions);
        }
        let stats = self.shared.stats.lock().unwrap().clone();
        (ledger, stats)
    }
}

async fn play_session(
    target: &Target,
    shared: &Shared,
    knobs: &Knobs,
    run: &str,
    label: &str,
    session_no: usize,
    ledger: &mut Ledger,
) {
    let external_id = format!("fault-{label}-{run}-{session_no}");
    let keyed = session_no.is_multiple_of(2);
    let mut prompts = 0;
    for (hook, body) in session_events(run, session_no, &external_id, knobs) {
        let marker = body["fault_marker"].as_str().unwrap().to_string();
        let key = keyed.then(|| format!("fault-{marker}"));
        let bytes = serde_json::to_vec(&body).unwrap();
        if hook == "UserPromptSubmit" {
            prompts += 1;
        }
        let answered_attempt_at = send_until_2xx(target, shared, knobs, &bytes, key.as_deref()).await;
        let answered = answered_attempt_at.is_some();
        if answered {
            shared.answered.fetch_add(1, Ordering::Relaxed);
        }
        ledger.events.push(SentEvent {
            marker,
            session: external_id.clone(),
            hook,
            answered,
            answered_attempt_at,
            body: bytes,
            key,
        });
    }
    ledger.sessions.push(SentSession {
        external_id,
        keyed,
        prompts,
    });
}

/// Sends the request 1–3 times, each dropped before its answer.
async fn abandon_some(target: &Target, shared: &Shared, body: &[u8], key: Option<&str>) {
    let times = rand::rng().random_range(1..=3);
    for _ in 0..times {
        abandon(target, body, key).await;
        shared.stats.lock().unwrap().abandoned += 1;
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Sends one event until it is answered 2xx, and says when the attempt so
/// answered was sent; None when refused (4xx) or the retry deadline passed.
async fn send_until_2xx(
    target: &Target,
    shared: &Shared,
    knobs: &Knobs,
    body: &[u8],
    key: Option<&str>,
) -> Option<f64> {
    let deadline = Instant::now() + knobs.retry_deadline;
    if shared.abandon.load(Ordering::Relaxed) {
        abandon_some(target, shared, body, key).await;
    }
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let mut req = target
            .http
            .post(format!("{}{HOOK_PATH}", target.base()))
            .bearer_auth(&target.token)
            .header("content-type", "application/json")
            .body(body.to_vec());
        if let Some(k) = key {
            req = req.header("idempotency-key", k);
        }
        let mut wait = Duration::from_millis((25u64 << attempt.min(5)).min(500));
        let sent_at = unix_now();
        match req.send().await {
            Ok(res) => {
                let status = res.status().as_u16();
                let retry_after = res
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                let text = res.text().await.unwrap_or_default();
                if (200..300).contains(&status) {
                    if attempt > 1 {
                        shared.stats.lock().unwrap().retried_events += 1;
                    }
                    return Some(sent_at);
                }
                {
                    let mut stats = shared.stats.lock().unwrap();
                    *stats.statuses.entry(status).or_default() += 1;
                    if (400..500).contains(&status) && status != 429 {
                        stats
                            .refused
                            .push(format!("{status} {}", text.chars().take(300).collect::<String>()));
                        return None;
                    }
                }
                if let Some(s) = retry_after {
                    wait = wait.max(Duration::from_secs(s.min(1)));
                }
            }
            Err(e) => {
                let mut stats = shared.stats.lock().unwrap();
                if e.is_timeout() {
                    stats.timeouts += 1;
                } else {
                    stats.conn_errors += 1;
                }
            }
        }
        if Instant::now() >= deadline {
            return None;
        }
        let jitter = Duration::from_millis(rand::rng().random_range(0..25));
        tokio::time::sleep(wait + jitter).await;
    }
}

/// Connects, sends the whole request, and drops the connection 0–20 ms
/// later without reading the answer (half the time with a reset).
async fn abandon(target: &Target, body: &[u8], key: Option<&str>) {
    abandon_at(target.port, &target.token, body, key).await;
}

async fn abandon_at(port: u16, token: &str, body: &[u8], key: Option<&str>) {
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return;
    };
    let mut head = format!(
        "POST {HOOK_PATH} HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n",
        port,
        token,
        body.len()
    );
    if let Some(k) = key {
        head.push_str(&format!("idempotency-key: {k}\r\n"));
    }
    head.push_str("\r\n");
    if s.write_all(head.as_bytes()).await.is_err() || s.write_all(body).await.is_err() {
        return;
    }
    let (delay, reset) = {
        let mut rng = rand::rng();
        (rng.random_range(0..=20u64), rng.random_bool(0.5))
    };
    tokio::time::sleep(Duration::from_millis(delay)).await;
    if reset {
        let _ = s.set_zero_linger();
    }
    drop(s);
}
