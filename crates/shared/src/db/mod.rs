//! Postgres access shared by every process: the pool and the migrations.

mod migrate;
mod pool;

pub use migrate::{MIGRATOR, check_schema, run_migrations};
pub use pool::{connect, connect_replica, ping};

/// True when the error is a unique violation of the named constraint or index.
pub fn is_unique_violation(err: &sqlx::Error, constraint: &str) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505")
        && db.constraint() == Some(constraint))
}
