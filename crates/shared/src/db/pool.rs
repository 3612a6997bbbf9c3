//! The connection pool, with timeouts that make an unreachable Postgres fail
//! fast instead of hanging requests.

use std::time::Duration;

use sqlx::{PgPool, postgres::PgPoolOptions};

use crate::config::StoreConfig;

pub async fn connect(config: &StoreConfig) -> anyhow::Result<PgPool> {
    let pool = PgPoolOptions::new()
        .max_connections(config.database_max_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(3))
        .connect(&config.database_url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot connect to Postgres at CAIRN_DATABASE_URL: {e}"))?;
    Ok(pool)
}
