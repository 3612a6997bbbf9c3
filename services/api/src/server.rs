//! Start-up: connect, migrate, bootstrap on an empty database, serve until
//! SIGTERM or Ctrl-C.

use cairn_shared::{bootstrap, db};
use tokio::net::TcpListener;

use crate::{app::app, config::ApiConfig, state::AppState};

/// Prepares the state: the pool, migrations and the first-start bootstrap.
pub async fn prepare(config: ApiConfig) -> anyhow::Result<AppState> {
    let pool = db::connect(&config.store).await?;
    db::run_migrations(&pool).await?;
    let state = AppState::new(pool, config)?;
    if state.config.bootstrap
        && let Some(done) = bootstrap::bootstrap_if_empty(&state.pool, &state.signer).await?
    {
        println!("{}", done.banner(&state.config.public_url));
    }
    Ok(state)
}

pub async fn serve(state: AppState, listener: TcpListener) -> anyhow::Result<()> {
    tracing::info!(addr = %listener.local_addr()?, "cairn-api listening");
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
