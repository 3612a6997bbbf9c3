//! The one query model of every path that finds memory: the words (and
//! the words to leave out), the query's vector, the filters, the clock,
//! how to match, and how many hits.

use std::{collections::HashSet, sync::Arc};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::doc::{Attrs, Source};

/// How a query is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// By words alone (BM25F).
    Lexical,
    /// By meaning alone (the query's vector).
    Semantic,
    /// Both, fused (`fuse`).
    Hybrid,
}

/// Conditions a hit must meet (AND); empty means none.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Observation types, any of; summaries have none and are then left out.
    pub kinds: Vec<String>,
    pub session_id: Option<Uuid>,
    /// Created at or after.
    pub since: Option<DateTime<Utc>>,
    /// Created at or before.
    pub until: Option<DateTime<Utc>>,
    /// Who reads: a memory private to a member is a hit only for that
    /// member (`viewer`) or when `sees_all`. The default sees the team's.
    pub viewer: Option<Uuid>,
    pub sees_all: bool,
    /// The memories a caller narrowed the search to (a filter the engine
    /// does not hold, answered by Postgres: every memory that passes it,
    /// no window), or `None` for no such narrowing.
    pub only: Option<Arc<HashSet<Uuid>>>,
}

impl Filters {
    /// Whether the memory `id` is within [`Filters::only`].
    #[inline]
    pub fn narrowed_to(&self, id: &Uuid) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(id))
    }
}

#[derive(Clone, Debug)]
pub struct Query<'a> {
    pub project_id: Uuid,
    /// The words to find.
    pub text: &'a str,
    /// Words a hit must not hold (`-word`), or empty.
    pub exclude: &'a str,
    /// The text's embedding, when there is one.
    pub vector: Option<&'a [f32]>,
    pub filters: &'a Filters,
    /// Memories written later are left out; recency is measured from it.
    pub as_of: DateTime<Utc>,
    /// Summaries are hits too.
    pub summaries: bool,
    pub mode: Mode,
    /// Hits wanted, best first.
    pub want: usize,
    /// The lexical arm's weight in hybrid mode; `None`: `fuse::lexical_weight()`.
    pub lexical_weight: Option<f32>,
}

impl Query<'_> {
    /// Whether a memory with these attributes may be a hit.
    pub fn admits(&self, source: Source, attrs: &Attrs) -> bool {
        let f = self.filters;
        attrs.state.searchable()
            && attrs.created_at <= self.as_of
            && match source {
                Source::Summary => self.summaries && f.kinds.is_empty(),
                Source::Observation => {
                    f.kinds.is_empty() || attrs.kind.as_ref().is_some_and(|k| f.kinds.contains(k))
                }
            }
            && f.session_id.is_none_or(|s| attrs.session_id == Some(s))
            && f.since.is_none_or(|t| attrs.created_at >= t)
            && f.until.is_none_or(|t| attrs.created_at <= t)
            && attrs
                .private_to
                .is_none_or(|owner| f.sees_all || f.viewer == Some(owner))
    }
}

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub source: Source,
    pub id: Uuid,
    pub score: f64,
    pub created_at: DateTime<Utc>,
    /// The lexical arm's own BM25F score (0 when it did not match).
    pub bm25: f32,
    /// The cosine similarity to the query (0 below the floor or without a vector).
    pub cosine: f32,
    /// How many of the query's distinct terms it holds…
    pub matched: u16,
    /// …of how many.
    pub terms: u16,
}
