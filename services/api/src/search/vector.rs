//! Vector candidates of a search: the query's embedding against the
//! stored embeddings of the project's newest memories.
//!
//! The search is exact and bounded: the newest `CANDIDATE_ROWS` memories
//! that pass the request's filters (found by the full-text module's own
//! statement, ordered newest, so the filters and `as_of` are the same ones)
//! have their vectors (of the current model) loaded and compared in Rust;
//! the `TOP` most similar above `MIN_SIMILARITY` are kept. Cost grows with
//! the bound, not with the project: bench/README.md has the figures. The
//! vectors read stay in memory (`vector_cache`), so a project's next search
//! reads only the ids.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::{Filters, Order, sql, vector_cache};

/// Memories compared per search (the newest that pass the filters).
pub const CANDIDATE_ROWS: i64 = 2_000;
/// Vector hits kept, best first.
pub const TOP: usize = 100;
/// Below this cosine similarity a memory is not a vector hit: unrelated
/// texts score about 0 to 0.15 with all-MiniLM-L6-v2.
pub const MIN_SIMILARITY: f32 = 0.25;

/// A memory and its similarity to the query.
#[derive(Clone, Debug)]
pub struct Scored {
    /// `observation` or `summary`.
    pub source: String,
    pub id: Uuid,
    pub similarity: f32,
}

pub struct Request<'a> {
    pub project_id: Uuid,
    pub as_of: Option<DateTime<Utc>>,
    pub filters: &'a Filters,
    pub summaries: bool,
    /// Excluded words (`query::Text::exclude`): memories matching them are left out, as in full-text.
    pub exclude: Option<&'a str>,
    /// The embedder's model: vectors of another model are ignored.
    pub model: &'a str,
    pub query: &'a [f32],
}

/// The best vector hits (at most `TOP`), and the clock the candidates were
/// read at (`None` when the project has none).
#[tracing::instrument(skip_all, fields(project_id = %r.project_id))]
pub async fn candidates(
    pool: &PgPool,
    r: &Request<'_>,
) -> sqlx::Result<(Vec<Scored>, Option<DateTime<Utc>>)> {
    let newest = sql::hits(
        pool,
        Order::Newest,
        &sql::Params {
            project_id: r.project_id,
            as_of: r.as_of,
            query: None,
            exclude: None,
            filters: r.filters,
            summaries: r.summaries,
            fetch: CANDIDATE_ROWS,
            offset: 0,
        },
    )
    .await?;
    let as_of = newest.first().map(|k| k.as_of);
    let ids = |source: &str| -> Vec<Uuid> {
        newest
            .iter()
            .filter(|k| k.source == source)
            .map(|k| k.id)
            .collect()
    };
    let model: Arc<str> = Arc::from(r.model);
    let (observation_ids, summary_ids) = (ids("observation"), ids("summary"));
    let (observations, summaries) = tokio::try_join!(
        cached_vectors(pool, Table::Observations, r.project_id, &observation_ids, &model),
        cached_vectors(pool, Table::Summaries, r.project_id, &summary_ids, &model),
    )?;
    let mut scored: Vec<Scored> = observations
        .into_iter()
        .map(|(id, v)| ("observation", id, v))
        .chain(summaries.into_iter().map(|(id, v)| ("summary", id, v)))
        .filter(|(_, _, v)| v.len() == r.query.len())
        .map(|(source, id, v)| Scored {
            source: source.into(),
            id,
            similarity: cairn_embed::dot(r.query, &v),
        })
        .filter(|s| s.similarity >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
    if let Some(exclude) = r.exclude {
        let ids: Vec<Uuid> = scored.iter().map(|s| s.id).collect();
        let excluded = matching(pool, r.project_id, &ids, exclude).await?;
        scored.retain(|s| !excluded.contains(&s.id));
    }
    scored.truncate(TOP);
    Ok((scored, as_of))
}

/// Which of these memories match `words` (` or `-joined, as `query::Text::exclude`).
#[tracing::instrument(skip(pool, ids, words), fields(ids = ids.len()))]
async fn matching(
    pool: &PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    words: &str,
) -> sqlx::Result<std::collections::HashSet<Uuid>> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let rows: Vec<(Uuid,)> = sqlx::query_as(
        "SELECT id FROM observations
         WHERE project_id = $1 AND id = ANY($2) AND search @@ websearch_to_tsquery('english', $3)
         UNION ALL
         SELECT id FROM summaries
         WHERE project_id = $1 AND id = ANY($2) AND search @@ websearch_to_tsquery('english', $3)",
    )
    .bind(project_id)
    .bind(ids)
    .bind(words)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

#[derive(Clone, Copy, Debug)]
enum Table {
    Observations,
    Summaries,
}

/// The vectors of these memories made by `model`: from the cache, the rest
/// read (and then cached). A memory without one yet is simply absent.
async fn cached_vectors(
    pool: &PgPool,
    table: Table,
    project_id: Uuid,
    ids: &[Uuid],
    model: &Arc<str>,
) -> sqlx::Result<Vec<vector_cache::Vector>> {
    let (mut found, missing) = vector_cache::split(ids, model);
    let read = vectors(pool, table, project_id, &missing, model).await?;
    found.extend(vector_cache::keep(model, read));
    Ok(found)
}

/// The stored vectors of these memories made by `model`.
#[tracing::instrument(skip(pool, ids), fields(ids = ids.len()))]
async fn vectors(
    pool: &PgPool,
    table: Table,
    project_id: Uuid,
    ids: &[Uuid],
    model: &str,
) -> sqlx::Result<Vec<(Uuid, Vec<f32>)>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let sql = match table {
        Table::Observations => {
            "SELECT observation_id, embedding FROM observation_embeddings
             WHERE observation_id = ANY($1) AND project_id = $2 AND model = $3"
        }
        Table::Summaries => {
            "SELECT summary_id, embedding FROM summary_embeddings
             WHERE summary_id = ANY($1) AND project_id = $2 AND model = $3"
        }
    };
    sqlx::query_as(sql)
        .bind(ids)
        .bind(project_id)
        .bind(model)
        .fetch_all(pool)
        .await
}
