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
    let options: PgConnectOptions = config
        .database_url
        .parse()
        .map_err(|e| anyhow::anyhow!("CAIRN_DATABASE_URL is not a Postgres URL: {e}"))?;
    let t = &config.timeouts;
    let options = options.options([
        ("statement_timeout", ms(t.statement)),
        ("lock_timeout", ms(t.lock)),
        ("idle_in_transaction_session_timeout", ms(t.idle_in_transaction)),
    ]);
    let pool = PgPoolOptions::new()
        .max_connections(config.database_max_connections)
        .min_connections(1)
        .acquire_timeout(t.acquire)
        .connect_with(options)
        .await
        .map_err(|e| anyhow::anyhow!("cannot connect to Postgres at CAIRN_DATABASE_URL: {e}"))?;
    Ok(pool)
}

fn ms(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// True when Postgres answers a trivial statement.
pub async fn ping(pool: &PgPool) -> bool {
    sqlx::query("SELECT 1").execute(pool).await.is_ok()
}
