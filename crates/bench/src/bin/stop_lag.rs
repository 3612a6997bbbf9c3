//! stop_lag: how long after a turn's Stop its turn summary can be read.
//!
//! A fresh `cairn_testkit::spawn_app()` and an in-process generator
//! (`cairn_generator::worker::run`, the `heuristic` provider, 4 workers, the
//! default 5 s sweep: the Redis wake-up the API pushes at Stop is what should
//! deliver the job, not the sweep). Then `--turns` turns, one after another,
//! each posted through the hook endpoint (UserPromptSubmit, 3 PostToolUse,
//! Stop; a new session every 10 turns). The clock starts when the Stop POST
//! has returned and stops when the `summaries` row of that session and turn
//! is visible, polled every 2 ms on a connection of its own. The next turn is
//! posted only after that, so each lag is measured on an idle generator.
//! Before each turn the bench pauses 0..=`--pause-ms` (spread evenly, no
//! randomness): the wake-up consumer polls Redis on a fixed period
//! (`CAIRN_WAKEUP_POLL_MS`, 200 ms), and turns posted back to back would
//! always land at the same phase of it. Prints p50, p90, p99 and max in ms.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use cairn_bench::{drop_database, quantile};
use cairn_generator::{config::GeneratorConfig, worker};
use cairn_testkit::{TestApp, cc, spawn_app};
use clap::Parser;
use serde_json::json;
use sqlx::{PgPool, postgres::PgPoolOptions};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
struct Args {
    /// Turns to post and time.
    #[arg(long, default_value_t = 200)]
    turns: usize,
    /// Longest pause before a turn, in ms; 0 posts turns back to back.
    #[arg(long, default_value_t = 250)]
    pause_ms: u64,
    /// CAIRN_WAKEUP_POLL_MS of the generator (its default when not given).
    #[arg(long)]
    wakeup_poll_ms: Option<u64>,
    /// Give up on one turn's summary after this many seconds.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
}

const TURNS_PER_SESSION: usize = 10;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let app = spawn_app().await;
    let env: HashMap<String, String> = [
        ("CAIRN_DATABASE_URL", app.database_url.as_str()),
        ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
        ("CAIRN_PROVIDER", "heuristic"),
        ("CAIRN_WORKERS", "4"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain(
        args.wakeup_poll_ms
            .map(|ms| ("CAIRN_WAKEUP_POLL_MS".to_string(), ms.to_string())),
    )
    .collect();
    let config = GeneratorConfig::from_env(&env).context("generator config")?;
    let (sweep_ms, poll_ms) = (config.sweep_interval.as_millis(), config.wakeup_poll.as_millis());
    let shutdown = CancellationToken::new();
    let generator = tokio::spawn(worker::run(config, shutdown.clone()));
    let watcher = PgPoolOptions::new()
        .max_connections(1)
        .connect(&app.database_url)
        .await?;

    let mut lags_ms = Vec::with_capacity(args.turns);
    for i in 0..args.turns {
        let session = format!("stop-lag-{}", i / TURNS_PER_SESSION);
        let turn = (i % TURNS_PER_SESSION + 1) as i32;
        // 97 is prime to 251: the pauses cover 0..=250 ms evenly over 251 turns.
        let pause = (i as u64 * 97) % (args.pause_ms + 1);
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let stopped = post_turn(&app, &session, turn).await?;
        let deadline = stopped + Duration::from_secs(args.timeout_secs);
        while !summary_visible(&watcher, &session, turn).await? {
            if Instant::now() > deadline {
                bail!(
                    "no turn summary for {session} turn {turn} within {} s",
                    args.timeout_secs
                );
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        lags_ms.push(stopped.elapsed().as_secs_f64() * 1000.0);
    }

    shutdown.cancel();
    generator.await??;
    lags_ms.sort_by(f64::total_cmp);
    println!(
        "stop_lag turns={} workers=4 sweep_ms={sweep_ms} wakeup_poll_ms={poll_ms} p50_ms={:.1} p90_ms={:.1} p99_ms={:.1} max_ms={:.1}",
        lags_ms.len(),
        quantile(&lags_ms, 0.50),
        quantile(&lags_ms, 0.90),
        quantile(&lags_ms, 0.99),
        quantile(&lags_ms, 1.0),
    );
    watcher.close().await;
    drop_database(&app.pool, &app.database_url).await
}

/// Posts turn `turn` of `session` and returns when its Stop POST returned.
async fn post_turn(app: &TestApp, session: &str, turn: i32) -> anyhow::Result<Instant> {
    let path = format!("src/module_{turn}.rs");
    let tool = |n: usize, name: &str, input: serde_json::Value, response: serde_json::Value| {
        cc(
            session,
            "PostToolUse",
            json!({
            "tool_name": name, "tool_use_id": format!("toolu_{session}_{turn}_{n}"),
            "tool_input": input, "tool_response": response }),
        )
    };
    let events = [
        cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": format!("Fix the panic on empty input in {path}") }),
        ),
        tool(
            1,
            "Read",
            json!({ "file_path": path }),
            json!({ "content": "pub fn parse(s: &str) -> u8 { s.as_bytes()[0] }" }),
        ),
        tool(
            2,
            "Edit",
            json!({ "file_path": path, "old_string": "s.as_bytes()[0]", "new_string": "s.bytes().next().unwrap_or(0)" }),
            json!({ "ok": true }),
        ),
        tool(
            3,
            "Bash",
            json!({ "command": "cargo test" }),
            json!({ "stdout": "test result: ok. 12 passed", "stderr": "" }),
        ),
        cc(
            session,
            "Stop",
            json!({ "last_assistant_message": format!("Fixed the empty-input panic in {path}.") }),
        ),
    ];
    for body in events {
        let (status, res) = app.hook(body).await;
        anyhow::ensure!(status == 200, "hook answered {status}: {res}");
    }
    Ok(Instant::now())
}

async fn summary_visible(pool: &PgPool, session: &str, turn: i32) -> sqlx::Result<bool> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM summaries s JOIN sessions x ON x.id = s.session_id
                        WHERE x.external_session_id = $1 AND s.scope = 'turn' AND s.prompt_number = $2)",
    )
    .bind(session)
    .bind(turn)
    .fetch_one(pool)
    .await
}
