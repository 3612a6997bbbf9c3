//! `cairn-api` binary: `serve` (the default) reads its configuration from
//! the environment and serves; `health` probes a running API's readiness.

use std::time::Duration;

use cairn_api::{config::ApiConfig, server};
use cairn_shared::config::ProcessEnv;
use clap::{Parser, Subcommand};

/// mimalloc instead of the system's allocator: the retrieval index builds
/// faster and the process keeps less memory once it is built; searches
/// take as long (bench/README.md, "mimalloc").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Cairn's HTTP API: hooks, memories, search, jobs, the dashboard and MCP.
/// Configured by `CAIRN_*` environment variables (see the README).
#[derive(Parser)]
#[command(name = "cairn-api", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default).
    Serve,
    /// Exit 0 when the API's readiness route answers 200 within 3 s, 1 otherwise.
    Health {
        /// The API's base URL.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        url: String,
    },
}

/// How long `health` waits for the readiness route.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

fn main() {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let code = runtime.block_on(async {
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => serve().await,
            Command::Health { url } => health(&url).await,
        }
    });
    std::process::exit(code);
}

async fn health(url: &str) -> i32 {
    let ready = format!("{}/api/readiness", url.trim_end_matches('/'));
    if cairn_telemetry::health::http_ok(&ready, HEALTH_TIMEOUT).await {
        0
    } else {
        eprintln!("cairn-api health: {ready} did not answer 200 within {HEALTH_TIMEOUT:?}");
        1
    }
}

async fn serve() -> i32 {
    let _telemetry = cairn_telemetry::init("cairn-api", "info,sqlx=warn");
    let config = match ApiConfig::from_env(&ProcessEnv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn-api: configuration error: {e}");
            return 2;
        }
    };
    let listen = config.listen;
    let result = async {
        if let Some(addr) = config.metrics_addr {
            cairn_telemetry::prom::serve(addr).await?;
        }
        let state = server::prepare(config).await?;
        let listener = tokio::net::TcpListener::bind(listen).await?;
        server::serve(state, listener).await
    }
    .await;
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("cairn-api: {e:#}");
            1
        }
    }
}
