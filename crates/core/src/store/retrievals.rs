//! Retrieval of memories (migration 0017's `memory_retrievals`): each
//! search hit and each injected observation counts once, which keeps a used
//! memory's rank in context and keeps it from the retention policy's archive.
//! Written after the answer, off the request's path and in batches
//! (`memory::retrievals`): a failed count is logged and lost, never an
//! error for the reader.

use sqlx::PgPool;
use uuid::Uuid;

/// Adds `n` retrievals to each `(project, observation, n)` (observations
/// of another project, or gone, are ignored), in one statement.
#[tracing::instrument(skip(pool, counts), fields(n = counts.len()), err)]
pub async fn record_counts(pool: &PgPool, counts: &[(Uuid, Uuid, i32)]) -> sqlx::Result<()> {
    let mut counts = counts.to_vec();
    // One order for every writer: concurrent upserts of the same rows cannot deadlock.
    counts.sort_unstable_by_key(|(_, id, _)| *id);
    let projects: Vec<Uuid> = counts.iter().map(|c| c.0).collect();
    let ids: Vec<Uuid> = counts.iter().map(|c| c.1).collect();
    let ns: Vec<i32> = counts.iter().map(|c| c.2).collect();
    sqlx::query(
        "INSERT INTO memory_retrievals AS r (observation_id, project_id, retrieved_count, last_retrieved_at)
         SELECT o.id, o.project_id, c.n, now()
         FROM unnest($1::uuid[], $2::uuid[], $3::int4[]) AS c(project_id, id, n)
         JOIN observations o ON o.id = c.id AND o.project_id = c.project_id
         ORDER BY o.id
         ON CONFLICT (observation_id) DO UPDATE
         SET retrieved_count = r.retrieved_count + excluded.retrieved_count, last_retrieved_at = now()",
    )
    .bind(&projects)
    .bind(&ids)
    .bind(&ns)
    .execute(pool)
    .await
    .map(drop)
}
