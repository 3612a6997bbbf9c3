//! Search over a project's memory: weighted full-text ranking (title above
//! facts and subtitle above narrative) blended with recency, filters, stable
//! cursor pagination, summaries as hits too; the timeline around an
//! observation; observations by ids. Served over HTTP (`routes/search.rs`)
//! and MCP (`mcp/`). The ranking formula is in `rank`, the statement in
//! `store::search`; README.md beside this file says how it all behaves. With
//! embeddings, a query is also matched by meaning (`vector`) and the two
//! rankings are fused (`fuse`), as the request's `mode` asks.

pub mod cursor;

pub mod engine;
pub mod mode;
pub mod params;
pub mod query;
pub mod rank;

use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use cursor::{Cursor, at_offset};
pub use mode::Mode;

use std::sync::Arc;

use crate::{
    error::{Error, Result},
    store::observations::{ObservationRow, SummaryRow},
    store::{search as sql, timeline},
};

/// Filters that combine (AND); empty means no filter.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Observation types, any of (`bugfix`, `feature`, …, `manual` kinds included).
    pub kinds: Vec<String>,
    /// Any of these concepts.
    pub concepts: Vec<String>,
    /// A path read or modified: the exact path, or any path ending in `/<file>`.
    pub file: Option<String>,
    pub session_id: Option<Uuid>,
    /// The agent of the observation's session (`claude-code`, …).
    pub agent: Option<String>,
    /// The `platformSource` of the observation's session (claude-mem's filter).
    pub platform_source: Option<String>,
    /// The member the memory came from (their sessions).
    pub member_id: Option<Uuid>,
    /// Who reads: private memories are hits for their author (and admins) only.
    pub viewer: crate::tenancy::Viewer,
    /// Created at or after.
    pub since: Option<DateTime<Utc>>,
    /// Created at or before.
    pub until: Option<DateTime<Utc>>,
}

impl Filters {
    /// Summaries have no type, concept or file: a filter on one of those leaves them out.
    fn admits_summaries(&self) -> bool {
        self.kinds.is_empty() && self.concepts.is_empty() && self.file.is_none()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Text rank blended with recency (newest first when there is no query).
    #[default]
    Relevance,
    Newest,
    Oldest,
}

#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub project_id: Uuid,
    /// Words to find; `None` lists by the filters alone.
    pub query: Option<String>,
    pub filters: Filters,
    /// Turn and session summaries are hits too.
    pub include_summaries: bool,
    pub order: Order,
    /// 1..=100.
    pub limit: i64,
    /// Opaque, from a previous page's `next_cursor` (or `cursor::at_offset`).
    pub cursor: Option<String>,
    /// `None`: the server's default (`Mode::resolve`).
    pub mode: Option<Mode>,
    /// Search as of this time (a commit's first sighting, `commit=`): memories
    /// written later are left out and recency is measured from it. A cursor's
    /// own time wins.
    pub as_of: Option<DateTime<Utc>>,
}

/// A page holds at most 100 hits, so the rows stay inline (no boxing) and
/// callers can match and build them plainly.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Hit {
    Observation { row: ObservationRow, score: f64 },
    Summary { row: SummaryRow, score: f64 },
}

impl Hit {
    pub fn id(&self) -> Uuid {
        match self {
            Hit::Observation { row, .. } => row.id,
            Hit::Summary { row, .. } => row.id,
        }
    }

    pub fn score(&self) -> f64 {
        match self {
            Hit::Observation { score, .. } | Hit::Summary { score, .. } => *score,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Page {
    pub hits: Vec<Hit>,
    /// `None` on the last page.
    pub next_cursor: Option<String>,
}

/// One page of hits, best first. Refuses (422) a limit outside 1..=100
/// (`invalid_field`), a cursor it did not make (`invalid_cursor`) and
/// `mode=vector` without an embedder (`invalid_field`). A ranked query is
/// answered by the retrieval engine (`engine`) over every memory of the
/// project; listings by date, and filters the engine does not hold, by the
/// Postgres statement (`sql`). Rows are read from the engine's `read_pool`
/// (a replica may lag: a memory it has not replayed yet is no hit, even
/// when the retrieval index, which follows the primary, ranked it).
pub async fn search(state: &crate::engine::Engine, request: &SearchRequest) -> Result<Page> {
    let mode = Mode::resolve(request.mode, state.embedder.is_some())?;
    let limit = params::limit(Some(request.limit), 20)?;
    let cursor = match request.cursor.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(text) => Cursor::decode(text)?,
        None => Cursor {
            offset: 0,
            as_of: request.as_of,
        },
    };
    if let (Some(since), Some(until)) = (request.filters.since, request.filters.until)
        && since > until
    {
        return Err(Error::unprocessable(
            "invalid_field",
            "the date range ends before it starts",
        ));
    }
    let query = match query::terms(request.query.as_deref()) {
        query::Terms::None => None,
        query::Terms::Nothing => {
            return Ok(Page {
                hits: vec![],
                next_cursor: None,
            });
        }
        query::Terms::Text(text) => Some(text),
    };
    let (query, exclude) = match &query {
        Some(t) => (Some(t.any.as_str()), t.exclude.as_deref()),
        None => (None, None),
    };
    // Without a query every score is 0: relevance is newest first.
    let order = match (query, request.order) {
        (None, Order::Relevance) => Order::Newest,
        (_, order) => order,
    };
    let params = sql::Params {
        project_id: request.project_id,
        as_of: cursor.as_of,
        query,
        exclude,
        filters: &request.filters,
        summaries: request.include_summaries && request.filters.admits_summaries(),
        fetch: limit + 1,
        offset: cursor.offset,
    };
    if let (Some(wanted), Order::Relevance) = (query, order) {
        let text = request.query.as_deref().unwrap_or_default();
        // A filter the engine does not hold: Postgres narrows the search to
        // every memory that passes it (a quoted phrase: that holds it), and
        // the engine ranks those.
        // With a phrase Postgres applies the words too, and the exclusions
        // (a phrase left out is left out as a phrase, where the engine would
        // leave out each of its words).
        let phrased = text.contains('"');
        let only = match engine::holds(&request.filters, text) {
            true => None,
            false => {
                let narrowing = sql::Params {
                    query: phrased.then_some(wanted),
                    ..params
                };
                Some(Arc::new(sql::narrowed(&state.read_pool, &narrowing).await?))
            }
        };
        let excluded = match phrased {
            true => "",
            false => exclude.unwrap_or_default(),
        };
        if let Some(keys) =
            engine::ranked(state, request, mode, wanted, excluded, cursor, limit, only).await?
        {
            return page_of(state, request.project_id, keys, cursor, limit).await;
        }
    }
    if mode == Mode::Vector {
        return Err(Error::unprocessable(
            "invalid_field",
            "`mode=vector` ranks a query by meaning, and this search has no query or its project is \
             past the search index's memory bound; use `mode=hybrid`",
        ));
    }
    let keys = sql::hits(&state.read_pool, order, &params).await?;
    page_of(state, request.project_id, keys, cursor, limit).await
}

/// The page of `keys` (`limit` of them, plus one more when there is a next
/// page), with the cursor to the next.
async fn page_of(
    state: &crate::engine::Engine,
    project_id: Uuid,
    mut keys: Vec<sql::HitKey>,
    cursor: Cursor,
    limit: i64,
) -> Result<Page> {
    let next_cursor = (keys.len() as i64 > limit).then(|| {
        Cursor {
            offset: cursor.offset + limit,
            as_of: Some(keys[0].as_of),
        }
        .encode()
    });
    keys.truncate(limit as usize);
    load_page(state, project_id, keys, next_cursor).await
}

/// The rows of a page's keys, in order, from the read pool; a row deleted
/// since the page was ranked (or not yet on the replica) is skipped. The
/// retrievals are recorded on the primary.
async fn load_page(
    state: &crate::engine::Engine,
    project_id: Uuid,
    keys: Vec<sql::HitKey>,
    next_cursor: Option<String>,
) -> Result<Page> {
    let (mut observations, mut summaries) = sql::load(&state.read_pool, project_id, &keys).await?;
    // A row deleted since the page was ranked is skipped.
    let hits = keys
        .into_iter()
        .filter_map(|k| match k.source.as_str() {
            "observation" => observations
                .remove(&k.id)
                .map(|row| Hit::Observation { row, score: k.score }),
            _ => summaries
                .remove(&k.id)
                .map(|row| Hit::Summary { row, score: k.score }),
        })
        .collect::<Vec<_>>();
    let found = hits
        .iter()
        .filter(|h| matches!(h, Hit::Observation { .. }))
        .map(Hit::id)
        .collect();
    state.retrievals.record(project_id, found);
    Ok(Page { hits, next_cursor })
}

/// Where a timeline is centred.
#[derive(Clone, Debug)]
pub enum Anchor {
    Observation(Uuid),
    /// The best hit of this query.
    Query(String),
}

#[derive(Clone, Debug)]
pub struct Timeline {
    pub anchor: Uuid,
    /// Oldest first; the anchor is among them.
    pub items: Vec<ObservationRow>,
}

/// `before` and `after` (each 0..=50) observations around the anchor, in
/// time order; `None` when the anchor is not an observation of the project
/// or the query finds none. Read from the engine's `read_pool`.
pub async fn timeline(
    state: &crate::engine::Engine,
    project_id: Uuid,
    anchor: Anchor,
    before: i64,
    after: i64,
    viewer: crate::tenancy::Viewer,
    member_id: Option<Uuid>,
) -> Result<Option<Timeline>> {
    let before = params::depth("before", Some(before), before)?;
    let after = params::depth("after", Some(after), after)?;
    let anchor = match anchor {
        Anchor::Observation(id) => id,
        Anchor::Query(text) => {
            let page = search(
                state,
                &SearchRequest {
                    project_id,
                    query: Some(text),
                    filters: Filters {
                        viewer,
                        member_id,
                        ..Filters::default()
                    },
                    include_summaries: false,
                    order: Order::Relevance,
                    limit: 1,
                    cursor: None,
                    mode: None,
                    as_of: None,
                },
            )
            .await?;
            match page.hits.first() {
                Some(hit) => hit.id(),
                None => return Ok(None),
            }
        }
    };
    let items = timeline::around(
        &state.read_pool,
        project_id,
        anchor,
        (before, after),
        viewer,
        member_id,
    )
    .await?;
    if !items.iter().any(|r| r.id == anchor) {
        return Ok(None);
    }
    Ok(Some(Timeline { anchor, items }))
}

/// The project's observations with these ids (unknown ids are skipped), in
/// the order asked, each once. At most 100 ids (422 `invalid_field`).
pub async fn by_ids(
    pool: &sqlx::PgPool,
    project_id: Uuid,
    ids: &[Uuid],
    viewer: crate::tenancy::Viewer,
) -> Result<Vec<ObservationRow>> {
    if ids.len() > params::MAX_IDS {
        return Err(Error::unprocessable(
            "invalid_field",
            format!("at most {} ids at once", params::MAX_IDS),
        ));
    }
    let mut unique = Vec::with_capacity(ids.len());
    for id in ids {
        if !unique.contains(id) {
            unique.push(*id);
        }
    }
    Ok(crate::store::observations::by_ids(pool, project_id, &unique, viewer).await?)
}
