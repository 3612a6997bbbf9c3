//! economy: what Cairn's LLM memory generation costs in input tokens, on a
//! replayed workload, through the OpenAI-compatible provider.
//!
//! 1. a fresh database and a real API (`cairn_testkit::spawn_app`, the
//!    production field cap of 16 KB);
//! 2. a local chat-completions server (axum) that answers each call with
//!    well-formed XML for the kind its user part names (`Job: …`), and
//!    reports `usage.prompt_tokens` counted on the request it got: system +
//!    user content with the `cl100k_base` tokenizer (tiktoken-rs, offline);
//! 3. a real generator worker in-process (`cairn_generator::worker::run`),
//!    `CAIRN_PROVIDER=openai` pointed at that server;
//! 4. the replay of `cairn_bench::workload::replay()` (10 sessions × 3
//!    turns, ~260 tool events) posted as Claude Code hook events, session
//!    after session; then it waits until every job is settled.
//!
//! Reported per job kind (from the `Job:` line of each call): calls, input
//! tokens (tokenizer and characters ÷ 4), the system prompt's share, output
//! tokens; in all: input tokens per 100 tool events and calls per turn;
//! the stored `generation_jobs.usage` summed per job type (cross-check, with
//! cached tokens); the summaries and observations written; and which planted
//! facts reached a prompt (`--show-missing` lists those that did not;
//! `--dump DIR` writes each call's prompt to a file).

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use axum::{Json, Router, extract::State, routing::post};
use cairn_bench::{
    drop_database,
    workload::{self, REPLAY_SESSIONS, REPLAY_TURNS},
};
use cairn_generator::{config::GeneratorConfig, prompt::estimate_tokens, worker};
use cairn_testkit::{Options, spawn_app_with};
use clap::Parser;
use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
struct Args {
    /// Give up waiting for the jobs after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
    /// List the planted facts that reached no prompt.
    #[arg(long)]
    show_missing: bool,
    /// Write every call's system and user parts to this directory.
    #[arg(long)]
    dump: Option<std::path::PathBuf>,
}

/// One chat-completions call as the mock server saw it.
#[derive(Clone, Debug)]
struct Call {
    kind: String,
    system: String,
    user: String,
    system_tokens: usize,
    user_tokens: usize,
    output_tokens: usize,
}

#[derive(Clone)]
struct Mock {
    calls: Arc<Mutex<Vec<Call>>>,
    bpe: Arc<CoreBPE>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let replay = workload::replay();
    let tool_events = replay.tool_events();

    let app = spawn_app_with(Options {
        extra: vec![("CAIRN_MAX_FIELD_BYTES", (16 * 1024).to_string())],
        ..Options::default()
    })
    .await;
    let mock = Mock {
        calls: Arc::default(),
        bpe: Arc::new(tiktoken_rs::cl100k_base().context("cl100k_base")?),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mock_url = format!("http://{}/v1", listener.local_addr()?);
    let router = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(mock.clone());
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let env: HashMap<String, String> = [
        ("CAIRN_DATABASE_URL", app.database_url.clone()),
        ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].clone()),
        ("CAIRN_DATABASE_MAX_CONNECTIONS", "10".into()),
        ("CAIRN_PROVIDER", "openai".into()),
        ("CAIRN_OPENAI_BASE_URL", mock_url),
        ("CAIRN_OPENAI_MODEL", "mock-chat".into()),
        ("CAIRN_WORKERS", "4".into()),
        ("CAIRN_SWEEP_MS", "250".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let config = GeneratorConfig::from_env(&env).context("generator config")?;
    let shutdown = CancellationToken::new();
    let generator = tokio::spawn(worker::run(config, shutdown.clone()));

    let started = Instant::now();
    for session in &replay.sessions {
        for body in &session.events {
            let (status, answer) = app.hook(body.clone()).await;
            anyhow::ensure!(status < 300, "hook answered {status}: {answer}");
        }
    }
    wait_settled(&app.pool, Duration::from_secs(args.timeout_secs)).await?;
    let seconds = started.elapsed().as_secs_f64();
    shutdown.cancel();
    generator.await??;
    server.abort();

    let calls = mock.calls.lock().unwrap().clone();
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
        for (i, c) in calls.iter().enumerate() {
            let name = format!("{i:03}-{}.txt", c.kind.replace(' ', "_"));
            std::fs::write(dir.join(name), format!("{}\n\n=====\n\n{}", c.system, c.user))?;
        }
    }
    report(&args, &app.pool, &replay, tool_events, &calls, seconds).await?;
    drop_database(&app.pool, &app.database_url).await?;
    Ok(())
}

/// Answers a chat-completions request with XML for the kind it names,
/// counting its input with the tokenizer.
async fn complete(State(mock): State<Mock>, Json(body): Json<Value>) -> Json<Value> {
    let content = |role: &str| {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (system, user) = (content("system"), content("user"));
    let kind = user
        .lines()
        .find_map(|l| l.strip_prefix("Job: "))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let answer = answer(&kind, &user);
    let call = Call {
        system_tokens: mock.bpe.encode_with_special_tokens(&system).len(),
        user_tokens: mock.bpe.encode_with_special_tokens(&user).len(),
        output_tokens: mock.bpe.encode_with_special_tokens(&answer).len(),
        kind,
        system,
        user,
    };
    let usage = json!({
        "prompt_tokens": call.system_tokens + call.user_tokens,
        "completion_tokens": call.output_tokens,
        "total_tokens": call.system_tokens + call.user_tokens + call.output_tokens,
    });
    mock.calls.lock().unwrap().push(call);
    Json(json!({
        "id": "chatcmpl-economy",
        "object": "chat.completion",
        "model": "mock-chat",
        "choices": [{ "index": 0, "finish_reason": "stop",
                      "message": { "role": "assistant", "content": answer } }],
        "usage": usage,
    }))
}

/// Observations when the kind names them, a summary when it names one.
fn answer(kind: &str, user: &str) -> String {
    let topic: String = user
        .lines()
        .skip_while(|l| !l.starts_with("## User prompt") && !l.starts_with("prompt:"))
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap_or("the turn")
        .trim_start_matches("prompt:")
        .trim()
        .chars()
        .take(70)
        .collect();
    let topic = topic
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut out = String::new();
    if kind.contains("observations") {
        out.push_str(&format!(
            "<observation>\n  <type>change</type>\n  <title>{topic}</title>\n  <subtitle>from the turn's tool calls</subtitle>\n  \
             <facts>\n    <fact>The agent worked on: {topic}</fact>\n    <fact>cargo test ran after the edits</fact>\n  </facts>\n  \
             <narrative>The agent read the relevant files, edited them and ran the tests.</narrative>\n  \
             <concepts>\n    <concept>what-changed</concept>\n  </concepts>\n  <files_read></files_read>\n  <files_modified></files_modified>\n\
             </observation>\n"
        ));
    }
    if kind.contains("summary") {
        out.push_str(&format!(
            "<summary>\n  <request>{topic}</request>\n  <investigated>The files named in the prompt.</investigated>\n  \
             <learned>How the code behaves.</learned>\n  <completed>The change and its test.</completed>\n  \
             <next_steps></next_steps>\n  <notes></notes>\n</summary>\n"
        ));
    }
    if out.is_empty() {
        out.push_str("<skip_summary reason=\"unknown job kind\"/>");
    }
    out
}

/// Waits until no job is queued or processing.
async fn wait_settled(pool: &sqlx::PgPool, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM generation_jobs WHERE status IN ('queued', 'processing')",
        )
        .fetch_one(pool)
        .await?;
        if open == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{open} jobs still open after {} s", timeout.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[derive(Default)]
struct Tally {
    calls: usize,
    system: usize,
    user: usize,
    output: usize,
    quarter_chars: usize,
}

impl Tally {
    fn add(&mut self, c: &Call) {
        self.calls += 1;
        self.system += c.system_tokens;
        self.user += c.user_tokens;
        self.output += c.output_tokens;
        self.quarter_chars += estimate_tokens(&c.system) + estimate_tokens(&c.user);
    }
    fn input(&self) -> usize {
        self.system + self.user
    }
}

async fn report(
    args: &Args,
    pool: &sqlx::PgPool,
    replay: &workload::Replay,
    tool_events: usize,
    calls: &[Call],
    seconds: f64,
) -> anyhow::Result<()> {
    let turns = REPLAY_SESSIONS * REPLAY_TURNS;
    let per_100 = |n: usize| n as f64 * 100.0 / tool_events as f64;
    let mut by_kind: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for c in calls {
        by_kind.entry(&c.kind).or_default().add(c);
        all.add(c);
    }
    println!(
        "replay: {REPLAY_SESSIONS} sessions × {REPLAY_TURNS} turns, {tool_events} tool events, settled in {seconds:.1} s"
    );
    println!(
        "{:<46} {:>5} {:>12} {:>10} {:>9} {:>10} {:>11}",
        "calls (tokens: cl100k_base)", "calls", "input", "per 100 ev", "system %", "output", "chars/4 in"
    );
    let rows: Vec<(&str, &Tally)> = by_kind
        .iter()
        .map(|(k, t)| (*k, t))
        .chain([("all", &all)])
        .collect();
    for (kind, t) in rows {
        println!(
            "{:<46} {:>5} {:>12} {:>10.0} {:>8.0}% {:>10} {:>11}",
            kind,
            t.calls,
            t.input(),
            per_100(t.input()),
            t.system as f64 * 100.0 / t.input().max(1) as f64,
            t.output,
            t.quarter_chars
        );
    }

    let stored: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT job_type, count(*),
                count(*) FILTER (WHERE status = 'completed'),
                coalesce(sum((usage->>'input_tokens')::bigint), 0)::bigint,
                coalesce(sum((usage->>'output_tokens')::bigint), 0)::bigint,
                coalesce(sum((usage->>'cached_tokens')::bigint), 0)::bigint
         FROM generation_jobs GROUP BY job_type ORDER BY job_type",
    )
    .fetch_all(pool)
    .await?;
    println!("stored generation_jobs.usage:");
    let mut stored_input = 0;
    for (job_type, jobs, completed, input, output, cached) in &stored {
        stored_input += input;
        println!(
            "  {job_type:<16} jobs {jobs:>3} (completed {completed:>3})  input {input:>8}  output {output:>7}  cached {cached}"
        );
    }
    let summaries: Vec<(String, i64)> =
        sqlx::query_as("SELECT scope, count(*) FROM summaries GROUP BY scope ORDER BY scope")
            .fetch_all(pool)
            .await?;
    let observations: i64 = sqlx::query_scalar("SELECT count(*) FROM observations")
        .fetch_one(pool)
        .await?;
    let turns_summarised: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT (session_id, prompt_number)) FROM summaries WHERE scope = 'turn'",
    )
    .fetch_one(pool)
    .await?;
    println!(
        "written: {observations} observations, summaries {summaries:?}, turns with a summary {turns_summarised}/{turns}"
    );

    let mut kept: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut missing = Vec::new();
    for fact in &replay.facts {
        let found = calls.iter().any(|c| c.user.contains(&fact.text));
        let entry = kept.entry(fact.kind).or_default();
        entry.1 += 1;
        if found {
            entry.0 += 1;
        } else {
            missing.push(fact);
        }
    }
    let facts_kept: usize = kept.values().map(|(k, _)| k).sum();
    let detail: Vec<String> = kept.iter().map(|(k, (a, b))| format!("{k} {a}/{b}")).collect();
    println!(
        "planted facts in a prompt: {facts_kept}/{} ({})",
        replay.facts.len(),
        detail.join(", ")
    );
    if args.show_missing {
        for fact in missing {
            println!(
                "  missing: session {} {}: {:?}",
                fact.session, fact.kind, fact.text
            );
        }
    }
    println!(
        "economy tool_events={tool_events} turns={turns} calls={} calls_per_turn={:.2} input_tokens={} \
         input_per_100={:.0} system_pct={:.0} output_tokens={} stored_input={stored_input} facts={facts_kept}/{}",
        all.calls,
        all.calls as f64 / turns as f64,
        all.input(),
        per_100(all.input()),
        all.system as f64 * 100.0 / all.input().max(1) as f64,
        all.output,
        replay.facts.len()
    );
    Ok(())
}
