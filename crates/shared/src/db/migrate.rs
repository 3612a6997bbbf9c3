//! Migrations from `migrations/`, applied on start. sqlx's migrator holds a
//! Postgres advisory lock while it runs, so replicas starting together apply
//! each migration once; applied ones are skipped, so a restart is a no-op.

use sqlx::{Connection, PgPool};

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// Runs on a connection of its own with the pool's statement and lock
/// timeouts lifted: waiting for another replica's migration, or for a lock a
/// long transaction holds, is expected here. The connection is closed after,
/// so no pooled connection keeps the lifted timeouts.
pub async fn run_migrations(pool: &PgPool) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?.detach();
    sqlx::raw_sql("SET statement_timeout = 0; SET lock_timeout = 0")
        .execute(&mut conn)
        .await?;
    let result = MIGRATOR
        .run(&mut conn)
        .await
        .map_err(|e| anyhow::anyhow!("migrations failed: {e}"));
    let result = match result {
        Ok(()) => super::partitions::ensure_partitions(&mut conn)
            .await
            .map(drop)
            .map_err(|e| anyhow::anyhow!("creating the weekly partitions failed: {e}")),
        err => err,
    };
    let _ = conn.close().await;
    result
}

/// Fails unless every migration this build knows is applied, for processes
/// that must not migrate themselves (the generator waits for the API).
pub async fn check_schema(pool: &PgPool) -> anyhow::Result<bool> {
    let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
        .fetch_all(pool)
        .await
        .unwrap_or_default();
    Ok(MIGRATOR.iter().all(|m| applied.contains(&m.version)))
}
