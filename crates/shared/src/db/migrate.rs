//! Migrations from `migrations/`, applied on start. sqlx's migrator holds a
//! Postgres advisory lock while it runs, so replicas starting together apply
//! each migration once; applied ones are skipped, so a restart is a no-op.

use sqlx::PgPool;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

pub async fn run_migrations(pool: &PgPool) -> anyhow::Result<()> {
    MIGRATOR
        .run(pool)
        .await
        .map_err(|e| anyhow::anyhow!("migrations failed: {e}"))
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
