//! The connection pool, with timeouts that make an unreachable Postgres fail
//! fast instead of hanging requests.

use std::time::Duration;

use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

use crate::config::StoreConfig;

/// Every pooled connection carries `statement_timeout`, `lock_timeout` and
/// `idle_in_transaction_session_timeout`, so a locked table or a stuck
/// client answers 503 in bounded time instead of pinning the pool.
pub async fn connect(config: &StoreConfig) -> anyhow::Result<PgPool> {
    let (pool, options) = settings(config, &config.database_url, "CAIRN_DATABASE_URL")?;
    pool.connect_with(options)
        .await
        .map_err(|e| anyhow::anyhow!("cannot connect to Postgres at CAIRN_DATABASE_URL: {e}"))
}

/// A pool on a read replica (`url`, named `name` in errors), with the
/// primary pool's size and timeouts. Lazy: the process starts, and answers
/// everything that reads the primary, while the replica is away.
pub fn connect_replica(config: &StoreConfig, url: &str, name: &str) -> anyhow::Result<PgPool> {
    let (pool, options) = settings(config, url, name)?;
    Ok(pool.connect_lazy_with(options))
}

fn settings(
    config: &StoreConfig,
    url: &str,
    name: &str,
) -> anyhow::Result<(PgPoolOptions, PgConnectOptions)> {
    let options: PgConnectOptions = url
        .parse()
        .map_err(|e| anyhow::anyhow!("{name} is not a Postgres URL: {e}"))?;
    let t = &config.timeouts;
    let options = options.options([
        ("statement_timeout", ms(t.statement)),
        ("lock_timeout", ms(t.lock)),
        ("idle_in_transaction_session_timeout", ms(t.idle_in_transaction)),
    ]);
    let pool = PgPoolOptions::new()
        .max_connections(config.database_max_connections)
        .min_connections(1)
        .acquire_timeout(t.acquire);
    Ok((pool, options))
}

fn ms(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// True when Postgres answers a trivial statement.
pub async fn ping(pool: &PgPool) -> bool {
    sqlx::query("SELECT 1").execute(pool).await.is_ok()
}
