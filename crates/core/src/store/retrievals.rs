//! Retrieval of memories (migration 0017's `memory_retrievals`): each
//! search hit and each injected observation counts once, which keeps a used
//! memory's rank in context and keeps it from the retention policy's archive.
//! Written after the answer, off the request's path: a failed count is
//! logged and lost, never an error for the reader.

use sqlx::PgPool;
use uuid::Uuid;

/// Counts one retrieval of each of `ids` (observations of the project; others are ignored).
#[tracing::instrument(skip(pool, ids), fields(n = ids.len()), err)]
pub async fn record(pool: &PgPool, project_id: Uuid, ids: &[Uuid]) -> sqlx::Result<()> {
    let mut ids = ids.to_vec();
    // One order for every writer: concurrent upserts of the same rows cannot deadlock.
    ids.sort_unstable();
    ids.dedup();
    sqlx::query(
        "INSERT INTO memory_retrievals AS r (observation_id, project_id, retrieved_count, last_retrieved_at)
         SELECT o.id, o.project_id, 1, now() FROM observations o
         WHERE o.project_id = $1 AND o.id = ANY($2) ORDER BY o.id
         ON CONFLICT (observation_id) DO UPDATE
         SET retrieved_count = r.retrieved_count + 1, last_retrieved_at = now()",
    )
    .bind(project_id)
    .bind(&ids)
    .execute(pool)
    .await
    .map(drop)
}

/// [`record`] in the background; nothing when `ids` is empty.
pub fn record_later(pool: &PgPool, project_id: Uuid, ids: Vec<Uuid>) {
    if ids.is_empty() {
        return;
    }
    let pool = pool.clone();
    tokio::spawn(async move {
        if let Err(e) = record(&pool, project_id, &ids).await {
            tracing::warn!(error = %e, %project_id, "counting retrievals failed");
        }
    });
}
