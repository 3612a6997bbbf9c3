//! Search over a project's memory: weighted full-text ranking (title above
//! facts and subtitle above narrative) blended with recency, filters, stable
//! cursor pagination, summaries as hits too; the timeline around an
//! observation; observations by ids. Served over HTTP (`routes/search.rs`)
//! and MCP (`mcp/`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{
    error::ApiResult,
    store::observations::{ObservationRow, SummaryRow},
};

/// Filters that combine (AND); empty means no filter.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Observation types (`bugfix`, `feature`, …, `manual` kinds included).
    pub kinds: Vec<String>,
    pub concepts: Vec<String>,
    /// A path read or modified.
    pub file: Option<String>,
    pub session_id: Option<Uuid>,
    /// The agent of the observation's session (`claude-code`, …).
    pub agent: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
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
    /// Opaque, from a previous page's `next_cursor`.
    pub cursor: Option<String>,
}

#[derive(Clone, Debug)]
pub enum Hit {
    Observation { row: ObservationRow, score: f64 },
    Summary { row: SummaryRow, score: f64 },
}

#[derive(Clone, Debug)]
pub struct Page {
    pub hits: Vec<Hit>,
    pub next_cursor: Option<String>,
}

pub async fn search(pool: &sqlx::PgPool, request: &SearchRequest) -> ApiResult<Page> {
    let _ = (pool, request);
    unimplemented!("search")
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

/// `before` and `after` observations around the anchor, in time order.
pub async fn timeline(
    pool: &sqlx::PgPool,
    project_id: Uuid,
    anchor: Anchor,
    before: i64,
    after: i64,
) -> ApiResult<Option<Timeline>> {
    let _ = (pool, project_id, anchor, before, after);
    unimplemented!("timeline")
}

/// The project's observations with these ids (unknown ids are skipped), in the order asked.
pub async fn by_ids(pool: &sqlx::PgPool, project_id: Uuid, ids: &[Uuid]) -> ApiResult<Vec<ObservationRow>> {
    let _ = (pool, project_id, ids);
    unimplemented!("by_ids")
}
