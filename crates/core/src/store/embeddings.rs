//! Vectors of observations and summaries (`observation_embeddings`,
//! `summary_embeddings`): one per row and model, written beside a job's
//! rows, by the API for a manual memory, and by the backfill for rows
//! written without one.

use sqlx::{PgConnection, PgPool, prelude::FromRow};
use uuid::Uuid;

/// Which row a vector belongs to.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Observation(Uuid),
    Summary(Uuid),
}

/// Writes `vector` for `target` (replacing one of another model).
#[tracing::instrument(skip(conn, vector), err)]
pub async fn write(
    conn: &mut PgConnection,
    project_id: Uuid,
    target: Target,
    model: &str,
    vector: &[f32],
) -> sqlx::Result<()> {
    let sql = match target {
        Target::Observation(_) => {
            "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (observation_id) DO UPDATE
             SET model = EXCLUDED.model, dims = EXCLUDED.dims, embedding = EXCLUDED.embedding, created_at = now()"
        }
        Target::Summary(_) => {
            "INSERT INTO summary_embeddings (summary_id, project_id, model, dims, embedding)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (summary_id) DO UPDATE
             SET model = EXCLUDED.model, dims = EXCLUDED.dims, embedding = EXCLUDED.embedding, created_at = now()"
        }
    };
    let id = match target {
        Target::Observation(id) | Target::Summary(id) => id,
    };
    sqlx::query(sql)
        .bind(id)
        .bind(project_id)
        .bind(model)
        .bind(vector.len() as i32)
        .bind(vector)
        .execute(conn)
        .await?;
    Ok(())
}

/// A row without a vector of the model, and the text to embed.
#[derive(FromRow)]
pub struct Missing {
    pub id: Uuid,
    pub project_id: Uuid,
    pub text: String,
    #[sqlx(default)]
    pub summary: bool,
}

impl Missing {
    fn target(&self) -> Target {
        if self.summary {
            Target::Summary(self.id)
        } else {
            Target::Observation(self.id)
        }
    }
}

/// Up to `limit` observations (or summaries) without a vector of `model`,
/// newest first.
#[tracing::instrument(skip(pool), err)]
pub async fn missing(pool: &PgPool, model: &str, summaries: bool, limit: i64) -> sqlx::Result<Vec<Missing>> {
    let sql = if summaries {
        "SELECT s.id, s.project_id, true AS summary,
                concat_ws(E'\\n', nullif(btrim(s.request), ''), nullif(btrim(s.investigated), ''),
                          nullif(btrim(s.learned), ''), nullif(btrim(s.completed), ''),
                          nullif(btrim(s.next_steps), '')) AS text
         FROM summaries s
         WHERE NOT EXISTS (SELECT 1 FROM summary_embeddings e
                           WHERE e.summary_id = s.id AND e.model = $1)
         ORDER BY s.created_at DESC LIMIT $2"
    } else {
        "SELECT o.id, o.project_id, false AS summary,
                concat_ws(E'\\n', nullif(btrim(o.title), ''), nullif(btrim(o.subtitle), ''),
                          nullif(array_to_string(o.facts, E'\\n'), ''), nullif(btrim(o.narrative), ''),
                          nullif(btrim(o.content), '')) AS text
         FROM observations o
         WHERE NOT EXISTS (SELECT 1 FROM observation_embeddings e
                           WHERE e.observation_id = o.id AND e.model = $1)
         ORDER BY o.created_at DESC LIMIT $2"
    };
    sqlx::query_as(sql).bind(model).bind(limit).fetch_all(pool).await
}

/// Writes each row's vector in one transaction; a row deleted meanwhile
/// fails its foreign key and is skipped, the rest are kept. Returns how
/// many were written.
#[tracing::instrument(skip(pool, rows, vectors), fields(rows = rows.len()), err)]
pub async fn write_batch(
    pool: &PgPool,
    model: &str,
    rows: &[Missing],
    vectors: &[Vec<f32>],
) -> sqlx::Result<usize> {
    let mut written = 0;
    let mut tx = pool.begin().await?;
    for (row, vector) in rows.iter().zip(vectors) {
        sqlx::query("SAVEPOINT one").execute(&mut *tx).await?;
        match write(&mut tx, row.project_id, row.target(), model, vector).await {
            Ok(()) => written += 1,
            Err(_) => {
                sqlx::query("ROLLBACK TO SAVEPOINT one").execute(&mut *tx).await?;
            }
        }
    }
    tx.commit().await?;
    Ok(written)
}
