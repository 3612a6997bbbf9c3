//! Vectors of observations and summaries (`observation_embeddings`,
//! `summary_embeddings`): one per row and model, written beside a job's
//! rows, by the API for a manual memory, and by the backfill for rows
//! written without one.

use sqlx::{PgConnection, PgPool, Postgres, pool::PoolConnection, prelude::FromRow};
use uuid::Uuid;

/// Which row a vector belongs to.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Observation(Uuid),
    Summary(Uuid),
}

/// What made a vector: the model's name and how it read the text
/// (`cairn_embed::Embedder::reading`).
#[derive(Clone, Copy, Debug)]
pub struct Made<'a> {
    pub model: &'a str,
    pub reading: i16,
}

/// Writes `vector` for `target` (replacing one of another model or reading).
#[tracing::instrument(skip(conn, vector), err)]
pub async fn write(
    conn: &mut PgConnection,
    project_id: Uuid,
    target: Target,
    made: Made<'_>,
    vector: &[f32],
) -> sqlx::Result<()> {
    let sql = match target {
        Target::Observation(_) => {
            "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding, reading)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (observation_id) DO UPDATE
             SET model = EXCLUDED.model, dims = EXCLUDED.dims, embedding = EXCLUDED.embedding,
                 reading = EXCLUDED.reading, created_at = now()"
        }
        Target::Summary(_) => {
            "INSERT INTO summary_embeddings (summary_id, project_id, model, dims, embedding, reading)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (summary_id) DO UPDATE
             SET model = EXCLUDED.model, dims = EXCLUDED.dims, embedding = EXCLUDED.embedding,
                 reading = EXCLUDED.reading, created_at = now()"
        }
    };
    let id = match target {
        Target::Observation(id) | Target::Summary(id) => id,
    };
    sqlx::query(sql)
        .bind(id)
        .bind(project_id)
        .bind(made.model)
        .bind(vector.len() as i32)
        .bind(vector)
        .bind(made.reading)
        .execute(conn)
        .await?;
    Ok(())
}

/// A row without a vector of the model (or with one of an older reading),
/// and the text to embed.
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

/// A summary's id, project and the text its vector is made of (a macro, so
/// that each statement stays one `&'static str`).
macro_rules! summary_text {
    () => {
        "SELECT s.id, s.project_id, true AS summary,
        concat_ws(E'\\n', nullif(btrim(s.request), ''), nullif(btrim(s.investigated), ''),
                  nullif(btrim(s.learned), ''), nullif(btrim(s.completed), ''),
                  nullif(btrim(s.next_steps), '')) AS text
    FROM summaries s"
    };
}
/// An observation's id, project and the text its vector is made of; a
/// manual memory's content is its narrative too, and is read once.
macro_rules! observation_text {
    () => {
        "SELECT o.id, o.project_id, false AS summary,
        concat_ws(E'\\n', nullif(btrim(o.title), ''), nullif(btrim(o.subtitle), ''),
                  nullif(array_to_string(o.facts, E'\\n'), ''), nullif(btrim(o.narrative), ''),
                  CASE WHEN o.content IS DISTINCT FROM o.narrative THEN nullif(btrim(o.content), '') END) AS text
    FROM observations o"
    };
}

/// Up to `limit` observations (or summaries) without a vector of `model`,
/// newest first.
#[tracing::instrument(skip(pool), err)]
pub async fn missing(pool: &PgPool, model: &str, summaries: bool, limit: i64) -> sqlx::Result<Vec<Missing>> {
    let sql = if summaries {
        concat!(
            summary_text!(),
            " WHERE NOT EXISTS (SELECT 1 FROM summary_embeddings e WHERE e.summary_id = s.id AND e.model = $1)
              ORDER BY s.created_at DESC LIMIT $2"
        )
    } else {
        concat!(
            observation_text!(),
            " WHERE NOT EXISTS (SELECT 1 FROM observation_embeddings e WHERE e.observation_id = o.id AND e.model = $1)
              ORDER BY o.created_at DESC LIMIT $2"
        )
    };
    sqlx::query_as(sql).bind(model).bind(limit).fetch_all(pool).await
}

/// Up to `limit` observations (or summaries) whose vector is of `model` but
/// of a reading before `reading`, in no particular order. The literal
/// `reading < 2` lets the planner use migration 0033's partial indexes.
#[tracing::instrument(skip(pool), err)]
pub async fn outdated(
    pool: &PgPool,
    model: &str,
    reading: i16,
    summaries: bool,
    limit: i64,
) -> sqlx::Result<Vec<Missing>> {
    let sql = if summaries {
        concat!(
            summary_text!(),
            " JOIN summary_embeddings e ON e.summary_id = s.id
              WHERE e.reading < 2 AND e.reading < $2 AND e.model = $1 LIMIT $3"
        )
    } else {
        concat!(
            observation_text!(),
            " JOIN observation_embeddings e ON e.observation_id = o.id
              WHERE e.reading < 2 AND e.reading < $2 AND e.model = $1 LIMIT $3"
        )
    };
    sqlx::query_as(sql)
        .bind(model)
        .bind(reading)
        .bind(limit)
        .fetch_all(pool)
        .await
}

/// Raises the reading of each of `rows`' vectors still of `made.model` to
/// `made.reading`, their vectors untouched (texts the new reading reads the
/// same); the retrieval feed is not stamped (migration 0033). Returns how
/// many were raised.
#[tracing::instrument(skip(pool, rows), fields(rows = rows.len()), err)]
pub async fn raise_reading(pool: &PgPool, made: Made<'_>, rows: &[&Missing]) -> sqlx::Result<u64> {
    let statements = [
        (
            false,
            "UPDATE observation_embeddings SET reading = $3
             WHERE observation_id = ANY($1) AND model = $2 AND reading < $3",
        ),
        (
            true,
            "UPDATE summary_embeddings SET reading = $3
             WHERE summary_id = ANY($1) AND model = $2 AND reading < $3",
        ),
    ];
    let mut raised = 0;
    for (summary, sql) in statements {
        let ids: Vec<Uuid> = rows
            .iter()
            .filter(|r| r.summary == summary)
            .map(|r| r.id)
            .collect();
        if ids.is_empty() {
            continue;
        }
        raised += sqlx::query(sql)
            .bind(ids)
            .bind(made.model)
            .bind(made.reading)
            .execute(pool)
            .await?
            .rows_affected();
    }
    Ok(raised)
}

/// Writes each row's vector in one transaction; a row deleted meanwhile
/// fails its foreign key and is skipped, the rest are kept. Returns how
/// many were written.
#[tracing::instrument(skip(pool, rows, vectors), fields(rows = rows.len()), err)]
pub async fn write_batch<R: std::borrow::Borrow<Missing>>(
    pool: &PgPool,
    made: Made<'_>,
    rows: &[R],
    vectors: &[Vec<f32>],
) -> sqlx::Result<usize> {
    let mut written = 0;
    let mut tx = pool.begin().await?;
    for (row, vector) in rows.iter().zip(vectors) {
        sqlx::query("SAVEPOINT one").execute(&mut *tx).await?;
        let row = row.borrow();
        match write(&mut tx, row.project_id, row.target(), made, vector).await {
            Ok(()) => written += 1,
            Err(_) => {
                sqlx::query("ROLLBACK TO SAVEPOINT one").execute(&mut *tx).await?;
            }
        }
    }
    tx.commit().await?;
    Ok(written)
}

/// One process's turn at the backfill: a session advisory lock held on a
/// connection of its own, so that of several generators one embeds and
/// re-reads at a time instead of each doing the same rows. A process that
/// dies loses its session, and the lock with it.
pub struct BackfillTurn(PoolConnection<Postgres>);

/// The backfill's turn, or `None` when another process holds it.
#[tracing::instrument(skip(pool), err)]
pub async fn backfill_turn(pool: &PgPool) -> sqlx::Result<Option<BackfillTurn>> {
    let mut conn = pool.acquire().await?;
    let locked: bool =
        sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext('cairn_embedding_backfill'))")
            .fetch_one(&mut *conn)
            .await?;
    Ok(locked.then_some(BackfillTurn(conn)))
}

impl BackfillTurn {
    /// Gives the turn back. Should the unlock fail, the connection is closed
    /// rather than returned to the pool still holding the lock.
    pub async fn end(mut self) {
        let unlocked = sqlx::query("SELECT pg_advisory_unlock(hashtext('cairn_embedding_backfill'))")
            .execute(&mut *self.0)
            .await;
        if let Err(e) = unlocked {
            tracing::warn!(error = %e, "backfill lock not released: closing its connection");
            let _ = self.0.close().await;
        }
    }
}
