//! Every statement the index reads Postgres with: whole projects (a
//! rebuild) and what changed since a cursor (the feed of migration 0021).
//!
//! The feed's cursor is a transaction id horizon: every change carries the
//! id of the transaction that made it (`index_tx`, set by trigger), and a
//! poll first takes the oldest transaction still running
//! (`pg_snapshot_xmin`), then reads every change at or past the previous
//! horizon. Everything before the new horizon had finished when the poll
//! began, so it was visible to the poll's reads: the next poll can start
//! there and miss nothing, whatever order transactions commit in. A change
//! read twice is applied twice, to the same effect.

use anyhow::Context;
use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

use crate::doc::{Attrs, Doc, State};

#[derive(FromRow)]
struct ObservationRow {
    id: Uuid,
    project_id: Uuid,
    created_at: DateTime<Utc>,
    state: String,
    kind: String,
    session_id: Option<Uuid>,
    title: String,
    subtitle: String,
    facts: Vec<String>,
    narrative: String,
    content: String,
    files_read: Vec<String>,
    files_modified: Vec<String>,
    helpful_count: i32,
    misleading_count: i32,
    private_to: Option<Uuid>,
}

impl ObservationRow {
    fn into_doc(self) -> (Uuid, Doc) {
        let mut files = self.files_read;
        files.extend(self.files_modified);
        let attrs = Attrs {
            created_at: self.created_at,
            state: State::parse(&self.state),
            kind: Some(self.kind),
            session_id: self.session_id,
            feedback: crate::doc::feedback_weight(self.helpful_count, self.misleading_count),
            private_to: self.private_to,
        };
        let doc = Doc::observation(
            self.id,
            attrs,
            &self.title,
            &self.subtitle,
            &self.facts,
            &self.narrative,
            &self.content,
            &files,
        );
        (self.project_id, doc)
    }
}

#[derive(FromRow)]
struct SummaryRow {
    id: Uuid,
    project_id: Uuid,
    created_at: DateTime<Utc>,
    session_id: Uuid,
    request: String,
    investigated: String,
    learned: String,
    completed: String,
    next_steps: String,
    notes: String,
    private_to: Option<Uuid>,
}

impl SummaryRow {
    fn into_doc(self) -> (Uuid, Doc) {
        let attrs = Attrs {
            created_at: self.created_at,
            state: State::Live,
            kind: None,
            session_id: Some(self.session_id),
            feedback: 1.0,
            private_to: self.private_to,
        };
        let doc = Doc::summary(
            self.id,
            attrs,
            &self.request,
            [&self.learned, &self.completed],
            [&self.investigated, &self.next_steps, &self.notes],
        );
        (self.project_id, doc)
    }
}

const OBSERVATION_COLUMNS: &str = "id, project_id, created_at, state, kind, session_id, title, subtitle, facts, \
     narrative, content, files_read, files_modified, helpful_count, misleading_count, \
     CASE WHEN visibility = 'private' THEN member_id END AS private_to";
const SUMMARY_COLUMNS: &str = "id, project_id, created_at, session_id, request, investigated, learned, completed, next_steps, notes, \
     CASE WHEN visibility = 'private' THEN member_id END AS private_to";

/// A memory's vector.
pub struct Vector {
    pub project_id: Uuid,
    pub id: Uuid,
    pub embedding: Vec<f32>,
}

/// `(project, memory, embedding)` rows as vectors.
fn vectors(rows: Vec<(Uuid, Uuid, Vec<f32>)>) -> Vec<Vector> {
    rows.into_iter()
        .map(|(project_id, id, embedding)| Vector {
            project_id,
            id,
            embedding,
        })
        .collect()
}

/// What the feed says was deleted.
pub struct Deletion {
    pub project_id: Uuid,
    pub id: Uuid,
    /// `observation`, `summary`, `observation_vector` or `summary_vector`.
    pub what: String,
}

/// The oldest transaction still running: the next poll's cursor.
#[tracing::instrument(skip_all)]
pub async fn horizon(pool: &PgPool) -> anyhow::Result<i64> {
    sqlx::query_scalar("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
        .fetch_one(pool)
        .await
        .context("reading the transaction horizon")
}

/// [`pending`]'s statement. Each table's newest stamp is read from the end
/// of its `index_tx` index (`ORDER BY … DESC LIMIT 1`), a plan that holds
/// whatever the statistics say. `EXISTS (… WHERE index_tx >= $1)` did not:
/// on a table not yet analysed (a restore, a bulk load) Postgres expected a
/// third of the rows to match and scanned the whole table, 0.46 s at
/// 500,000 observations, on every poll (bench/README.md, "The feed's poll
/// at 500,000 memories").
pub fn pending_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let newest = FEED_TABLES.map(|table| {
            format!(
                "coalesce((SELECT index_tx FROM {table} WHERE index_tx IS NOT NULL \
                 ORDER BY index_tx DESC LIMIT 1) >= $1::text::xid8, false)"
            )
        });
        format!(
            "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, {}",
            newest.join(" OR ")
        )
    });
    &SQL
}

/// Every table whose rows carry the feed's `index_tx` stamp (migration 0021).
const FEED_TABLES: [&str; 5] = [
    "observations",
    "summaries",
    "observation_embeddings",
    "summary_embeddings",
    "memory_index_deletions",
];

/// The horizon now, and whether anything was written or deleted at or
/// past `cursor` since: one round trip, so a search with nothing new to
/// read pays one index probe per table.
#[tracing::instrument(skip(pool))]
pub async fn pending(pool: &PgPool, cursor: i64) -> anyhow::Result<(i64, bool)> {
    sqlx::query_as(sqlx::AssertSqlSafe(pending_sql()))
        .bind(cursor.to_string())
        .fetch_one(pool)
        .await
        .context("checking the retrieval feed")
}

/// Every project's id.
#[tracing::instrument(skip_all)]
pub async fn projects(pool: &PgPool) -> anyhow::Result<Vec<Uuid>> {
    sqlx::query_scalar("SELECT id FROM projects ORDER BY id")
        .fetch_all(pool)
        .await
        .context("listing projects to index")
}

/// Every memory of a project, as the index sees it.
#[tracing::instrument(skip(pool))]
pub async fn project_docs(pool: &PgPool, project_id: Uuid) -> anyhow::Result<Vec<Doc>> {
    let observations: Vec<ObservationRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {OBSERVATION_COLUMNS} FROM observations WHERE project_id = $1"
    )))
    .bind(project_id)
    .fetch_all(pool)
    .await
    .context("loading a project's observations to index")?;
    let summaries: Vec<SummaryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries WHERE project_id = $1"
    )))
    .bind(project_id)
    .fetch_all(pool)
    .await
    .context("loading a project's summaries to index")?;
    Ok(observations
        .into_iter()
        .map(|r| r.into_doc().1)
        .chain(summaries.into_iter().map(|r| r.into_doc().1))
        .collect())
}

/// Every vector of `model` of a project's memories.
#[tracing::instrument(skip(pool))]
pub async fn project_vectors(pool: &PgPool, project_id: Uuid, model: &str) -> anyhow::Result<Vec<Vector>> {
    let rows: Vec<(Uuid, Uuid, Vec<f32>)> = sqlx::query_as(
        "SELECT project_id, observation_id, embedding FROM observation_embeddings
         WHERE project_id = $1 AND model = $2
         UNION ALL
         SELECT project_id, summary_id, embedding FROM summary_embeddings
         WHERE project_id = $1 AND model = $2",
    )
    .bind(project_id)
    .bind(model)
    .fetch_all(pool)
    .await
    .context("loading a project's vectors to index")?;
    Ok(vectors(rows))
}

/// Memories written or changed at or past `cursor` (of one project, or of
/// all), with their projects.
#[tracing::instrument(skip(pool))]
pub async fn changed_docs(
    pool: &PgPool,
    cursor: i64,
    project: Option<Uuid>,
) -> anyhow::Result<Vec<(Uuid, Doc)>> {
    let observations: Vec<ObservationRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {OBSERVATION_COLUMNS} FROM observations
         WHERE index_tx >= $1::text::xid8 AND ($2::uuid IS NULL OR project_id = $2)"
    )))
    .bind(cursor.to_string())
    .bind(project)
    .fetch_all(pool)
    .await
    .context("reading changed observations")?;
    let summaries: Vec<SummaryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries
         WHERE index_tx >= $1::text::xid8 AND ($2::uuid IS NULL OR project_id = $2)"
    )))
    .bind(cursor.to_string())
    .bind(project)
    .fetch_all(pool)
    .await
    .context("reading changed summaries")?;
    Ok(observations
        .into_iter()
        .map(ObservationRow::into_doc)
        .chain(summaries.into_iter().map(SummaryRow::into_doc))
        .collect())
}

/// Vectors of `model` written at or past `cursor` (of one project, or of all).
#[tracing::instrument(skip(pool))]
pub async fn changed_vectors(
    pool: &PgPool,
    cursor: i64,
    model: &str,
    project: Option<Uuid>,
) -> anyhow::Result<Vec<Vector>> {
    let rows: Vec<(Uuid, Uuid, Vec<f32>)> = sqlx::query_as(
        "SELECT project_id, observation_id, embedding FROM observation_embeddings
         WHERE index_tx >= $1::text::xid8 AND model = $2 AND ($3::uuid IS NULL OR project_id = $3)
         UNION ALL
         SELECT project_id, summary_id, embedding FROM summary_embeddings
         WHERE index_tx >= $1::text::xid8 AND model = $2 AND ($3::uuid IS NULL OR project_id = $3)",
    )
    .bind(cursor.to_string())
    .bind(model)
    .bind(project)
    .fetch_all(pool)
    .await
    .context("reading changed vectors")?;
    Ok(vectors(rows))
}

/// Memories and vectors deleted at or past `cursor` (of one project, or of all).
#[tracing::instrument(skip(pool))]
pub async fn deletions(pool: &PgPool, cursor: i64, project: Option<Uuid>) -> anyhow::Result<Vec<Deletion>> {
    let rows: Vec<(Uuid, Uuid, String)> = sqlx::query_as(
        "SELECT project_id, memory_id, what FROM memory_index_deletions
         WHERE index_tx >= $1::text::xid8 AND ($2::uuid IS NULL OR project_id = $2)",
    )
    .bind(cursor.to_string())
    .bind(project)
    .fetch_all(pool)
    .await
    .context("reading deleted memories")?;
    Ok(rows
        .into_iter()
        .map(|(project_id, id, what)| Deletion { project_id, id, what })
        .collect())
}

/// Forgets deletions older than `keep`: a replica that has not polled
/// for that long rebuilds instead (`follow`).
#[tracing::instrument(skip(pool))]
pub async fn prune_deletions(pool: &PgPool, keep: std::time::Duration) -> anyhow::Result<u64> {
    let done = sqlx::query(
        "DELETE FROM memory_index_deletions WHERE deleted_at < now() - make_interval(secs => $1)",
    )
    .bind(keep.as_secs_f64())
    .execute(pool)
    .await
    .context("pruning the deletion feed")?;
    Ok(done.rows_affected())
}
