//! Helpers shared by the generator benchmarks in `src/bin/` (run them all
//! with `bench/generator.sh`; see `bench/README.md`).

use sqlx::PgPool;

/// The API's and generator's allocator (mimalloc), so that the benches
/// which run the API in process measure what it runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The value at quantile `q` (0..=1) of `sorted` (nearest rank); 0 when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Drops a database `cairn_testkit::spawn_app` made, once the bench is done
/// with it, so repeated runs do not pile up databases. `pool` is closed first.
pub async fn drop_database(pool: &PgPool, database_url: &str) -> anyhow::Result<()> {
    pool.close().await;
    let name = database_url.rsplit('/').next().unwrap_or_default();
    anyhow::ensure!(name.starts_with("cairn_test_"), "refusing to drop {name:?}");
    let admin = PgPool::connect(&cairn_testkit::admin_url()).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&admin)
    .await?;
    admin.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}

/// A synthetic corpus of memories at any size (`search_scale`, recall at scale).
pub mod corpus;
pub mod note_vectors;
/// The recall benchmark: planted facts, retention and retrieval (`src/bin/recall.rs`).
pub mod recall;
/// The synthetic Claude Code workload of the prompt and economy benchmarks.
pub mod workload;
