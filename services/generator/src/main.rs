//! `cairn-generator`: `run` (the default) reads its configuration, runs the
//! workers until SIGTERM or Ctrl-C, then drains (see `worker::run`);
//! `health` checks the liveness file the running process keeps fresh.

use std::time::Duration;

use cairn_generator::{
    config::{self, GeneratorConfig},
    worker,
};
use cairn_shared::config::ProcessEnv;
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of the system's allocator, as in `cairn-api`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Cairn's generator: turns queued generation jobs into observations and
/// summaries. Configured by `CAIRN_*` environment variables (see the README).
#[derive(Parser)]
#[command(name = "cairn-generator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the workers (the default).
    Run,
    /// Exit 0 when the liveness file (`CAIRN_LIVENESS_FILE`) was touched
    /// within 30 s, 1 otherwise (a hung or stopped generator).
    Health,
}

/// How often the running generator touches its liveness file.
const LIVENESS_EVERY: Duration = Duration::from_secs(5);
/// `health` fails once the file is older than this.
const LIVENESS_MAX_AGE: Duration = Duration::from_secs(30);

fn main() {
    let cli = Cli::parse();
    let code = match cli.command.unwrap_or(Command::Run) {
        Command::Health => health(),
        Command::Run => tokio::runtime::Runtime::new()
            .expect("a tokio runtime")
            .block_on(run()),
    };
    std::process::exit(code);
}

fn health() -> i32 {
    let path = config::liveness_file(&ProcessEnv);
    if cairn_telemetry::health::fresh(&path, LIVENESS_MAX_AGE) {
        0
    } else {
        eprintln!(
            "cairn-generator health: {} is missing or older than {LIVENESS_MAX_AGE:?}",
            path.display()
        );
        1
    }
}

async fn run() -> i32 {
    let _telemetry = cairn_telemetry::init(
        "cairn-generator",
        "info,sqlx=warn,apalis=warn,apalis_core=warn,apalis_redis=warn",
    );
    let config = match GeneratorConfig::from_env(&ProcessEnv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn-generator: configuration error: {e}");
            return 2;
        }
    };
    if let Some(addr) = config.metrics_addr
        && let Err(e) = cairn_telemetry::prom::serve(addr).await
    {
        eprintln!("cairn-generator: metrics listener on {addr}: {e}");
        return 1;
    }
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            shutdown.cancel();
        }
    });
    tokio::spawn(keep_alive(config.liveness_file.clone(), shutdown.clone()));
    match worker::run(config, shutdown).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("cairn-generator: {e:#}");
            1
        }
    }
}

/// Touches the liveness file every few seconds while the runtime makes progress.
async fn keep_alive(path: std::path::PathBuf, shutdown: CancellationToken) {
    let mut every = tokio::time::interval(LIVENESS_EVERY);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = every.tick() => {}
        }
        if let Err(e) = cairn_telemetry::health::touch(&path) {
            tracing::warn!(path = %path.display(), error = %e, "could not touch the liveness file");
        }
    }
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}
