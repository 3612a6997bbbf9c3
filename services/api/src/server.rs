//! Start-up: connect, migrate, bootstrap on an empty database, then serve
//! until SIGTERM or Ctrl-C. Connections are served by hyper directly so that
//! slow clients are bounded: a connection cap, a deadline for request
//! headers, and a cap on what a connection may buffer.

use std::{net::SocketAddr, sync::Arc};

use axum::{extract::ConnectInfo, http::Request};
use cairn_shared::{bootstrap, db};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto::Builder, graceful::GracefulShutdown},
};
use tokio::{net::TcpListener, sync::Semaphore};
use tower::ServiceExt;

use crate::{app::app, config::ApiConfig, middleware::rate_limit, state::AppState};

/// Headers hyper itself accepts before answering 431 (given a JSON body by
/// `parse_errors`); the API's own, lower limits apply below these.
const HYPER_MAX_BUF: usize = 256 * 1024;
const HYPER_MAX_HEADERS: usize = 1000;

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
    serve_until(state, listener, shutdown_signal()).await
}

pub async fn serve_until(
    state: AppState,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    tracing::info!(addr = %listener.local_addr()?, "cairn-api listening");
    let limits = state.config.limits.clone();
    let live = state.live.clone();
    rate_limit::spawn_cleanup(state.rate_limiter.clone());
    cairn_telemetry::prom::watch_pool(state.pool.clone(), "api");
    let engine = state.clone();
    let router = app(state);
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(HYPER_MAX_BUF)
        .max_headers(HYPER_MAX_HEADERS);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let connections = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => permit?,
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            router.clone().oneshot(req)
        });
        // hyper's own error answers (before routing) get the JSON body too.
        let stream = crate::parse_errors::JsonParseErrors::new(stream);
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let conn = graceful.watch(conn.into_owned());
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    // Live streams never finish on their own: end them, or the shutdown waits forever.
    live.close();
    graceful.shutdown().await;
    // The counts of the last reads, before the process ends.
    engine.retrievals.flush().await;
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
