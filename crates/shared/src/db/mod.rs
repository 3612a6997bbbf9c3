//! Postgres access shared by every process: the pool, the migrations and
//! the weekly partitions.

mod migrate;
mod partitions;
mod pool;

pub use migrate::{MIGRATOR, check_schema, run_migrations};
pub use partitions::{PARTITIONED, ensure_partitions};
pub use pool::{connect, connect_replica, ping};

/// True when the error is a unique violation of the named constraint or index.
pub fn is_unique_violation(err: &sqlx::Error, constraint: &str) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505")
        && db.constraint() == Some(constraint))
}
