//! `cairn-generator`: the generation workers. For now it starts, waits until
//! the API has applied every migration this build knows, and idles until
//! SIGTERM; claiming and running jobs is the next step (see README, Status).

use std::time::Duration;

use cairn_shared::{
    config::{ProcessEnv, StoreConfig},
    db,
};

#[tokio::main]
async fn main() {
    cairn_shared::telemetry::init("info,sqlx=warn");
    let config = match StoreConfig::from_env(&ProcessEnv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn-generator: configuration error: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(config).await {
        eprintln!("cairn-generator: {e:#}");
        std::process::exit(1);
    }
}

async fn run(config: StoreConfig) -> anyhow::Result<()> {
    let pool = db::connect(&config).await?;
    // The API applies migrations; the generator waits for them rather than racing.
    let mut waited = 0;
    while !db::check_schema(&pool).await? {
        if waited % 10 == 0 {
            tracing::info!("waiting for cairn-api to apply the database migrations");
        }
        waited += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tracing::info!("schema is current; cairn-generator is idle until job processing lands");
    shutdown_signal().await;
    tracing::info!("cairn-generator stopping");
    Ok(())
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}
