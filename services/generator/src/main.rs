//! `cairn-generator`: reads its configuration, runs the workers until
//! SIGTERM or Ctrl-C, then drains (see `worker::run`).

use cairn_generator::{config::GeneratorConfig, worker};
use cairn_shared::config::ProcessEnv;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() {
    cairn_shared::telemetry::init("info,sqlx=warn,apalis=warn,apalis_core=warn,apalis_redis=warn");
    let config = match GeneratorConfig::from_env(&ProcessEnv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn-generator: configuration error: {e}");
            std::process::exit(2);
        }
    };
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            shutdown.cancel();
        }
    });
    if let Err(e) = worker::run(config, shutdown).await {
        eprintln!("cairn-generator: {e:#}");
        std::process::exit(1);
    }
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}
