//! What a context is made from (read through `store::context`): the project's settings,
//! its newest summaries and observations, and (with a query) the
//! observations that match it best — by its words, and with an embedder by
//! its meaning too, the two fused as search fuses them (`relevant`). Every
//! query is bounded to one project.

use crate::tenancy::Viewer;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

pub use crate::store::context::{ObservationItem, ProjectSettings, SummaryItem, settings};
use crate::{
    engine::Engine,
    error::Result,
    store::{context as store, file_memories},
};

/// Newest summaries considered.
const SUMMARIES: i64 = 8;
/// Newest observations considered for the index.
const RECENT: i64 = 80;
/// Observations shown in full.
pub const DETAILED: i64 = 3;
/// Observations counted for the footer, at most.
pub const COUNT_CAP: i64 = 1000;

/// The candidates, newest first.
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    pub summaries: Vec<SummaryItem>,
    pub recent: Vec<ObservationItem>,
    /// Shown in full, best first: the query's best matches, or the newest.
    pub relevant: Vec<ObservationItem>,
    /// Observations in the project, counted up to `COUNT_CAP`.
    pub total_observations: i64,
}

/// What a session is working on, as its hook saw it at the start.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkAtHand<'a> {
    /// The checked-out branch.
    pub branch: Option<&'a str>,
    /// The files changed in the worktree, in every form a memory may name them.
    pub changed: &'a [String],
}

/// What a context is built from, read from `reads` (the engine's
/// `read_pool`, or the primary); a query's relevant memories found by the
/// retrieval engine; as of `as_of` (a commit's first sighting) when set.
pub async fn candidates(
    state: &Engine,
    reads: &PgPool,
    project_id: Uuid,
    query: Option<&str>,
    work: &WorkAtHand<'_>,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> Result<Candidates> {
    let pool = reads;
    let summaries = store::newest_summaries(pool, project_id, SUMMARIES, as_of, viewer);
    let recent = store::newest_observations(pool, project_id, RECENT, as_of, viewer);
    // Counted up to a cap: the footer says "1000+" rather than scan a large project.
    let total = store::count_observations(pool, project_id, COUNT_CAP, as_of, viewer);
    let (summaries, recent, total_observations): (Vec<SummaryItem>, Vec<ObservationItem>, i64) =
        tokio::try_join!(summaries, recent, total)?;
    let relevant = match query.map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => relevant(state, reads, project_id, q, as_of, viewer).await?,
        None => {
            // The work at hand first: memories of the files changed in the
            // worktree, then of this branch's earlier sessions, then the newest.
            let mut relevant = match work.changed {
                [] => vec![],
                paths => file_memories::of_files(pool, project_id, paths, DETAILED, viewer).await?,
            };
            if let Some(b) = work.branch.filter(|b| !is_default_branch(b)) {
                relevant.extend(store::of_branch(pool, project_id, b, DETAILED, as_of, viewer).await?);
            }
            let mut seen = std::collections::HashSet::new();
            relevant.retain(|o| seen.insert(o.id));
            relevant.truncate(DETAILED as usize);
            for o in &recent {
                if relevant.len() >= DETAILED as usize {
                    break;
                }
                if !relevant.iter().any(|r| r.id == o.id) {
                    relevant.push(o.clone());
                }
            }
            relevant
        }
    };
    Ok(Candidates {
        summaries,
        recent,
        relevant,
        total_observations,
    })
}

/// The `DETAILED` observations most relevant to `text` (a prompt or a
/// query), from the retrieval engine: by words and, with an embedder, by
/// meaning, over every memory of the project; each with its fused score.
/// When the text cannot be embedded now (logged), by words alone.
pub async fn relevant(
    state: &Engine,
    reads: &PgPool,
    project_id: Uuid,
    text: &str,
    as_of: Option<DateTime<Utc>>,
    viewer: Viewer,
) -> Result<Vec<ObservationItem>> {
    Ok(relevant_scored(
        state,
        reads,
        project_id,
        text,
        as_of,
        DETAILED as usize,
        false,
        viewer,
    )
    .await?
    .into_iter()
    .map(|(o, _)| o)
    .collect())
}

/// [`relevant`], at most `want`, with the engine's hits (best first); turn
/// and session summaries too when `summaries` (each shown as an item whose
/// kind is `turn summary` or `session summary`: the prompt as its title,
/// what was learned, done and left to do as its facts). The hits' rows are
/// read from `reads`: a hit the pool does not hold yet is left out.
#[allow(clippy::too_many_arguments)]
pub async fn relevant_scored(
    state: &Engine,
    reads: &PgPool,
    project_id: Uuid,
    text: &str,
    as_of: Option<DateTime<Utc>>,
    want: usize,
    summaries: bool,
    viewer: Viewer,
) -> Result<Vec<(ObservationItem, cairn_retrieval::Hit)>> {
    let vector = match &state.embedder {
        Some(embedder) => match state.retrieval.embed_query(embedder, text).await {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(error = %e, "text not embedded: related memories by words only");
                None
            }
        },
        None => None,
    };
    let filters = cairn_retrieval::Filters {
        viewer: viewer.member_id,
        sees_all: viewer.sees_all,
        ..Default::default()
    };
    let query = cairn_retrieval::Query {
        project_id,
        text,
        exclude: "",
        vector: vector.as_deref().map(Vec::as_slice),
        filters: &filters,
        as_of: as_of.unwrap_or_else(Utc::now),
        summaries,
        mode: match vector {
            Some(_) => cairn_retrieval::Mode::Hybrid,
            None => cairn_retrieval::Mode::Lexical,
        },
        want,
        lexical_weight: None,
    };
    let hits = state
        .retrieval
        .search(&query)
        .await
        .map_err(crate::search::engine::failed)?
        .unwrap_or_default();
    let of = |source| -> Vec<Uuid> { hits.iter().filter(|h| h.source == source).map(|h| h.id).collect() };
    let (observation_ids, summary_ids) = (
        of(cairn_retrieval::Source::Observation),
        of(cairn_retrieval::Source::Summary),
    );
    let mut known: std::collections::HashMap<Uuid, ObservationItem> =
        store::observations_by_ids(reads, project_id, &observation_ids, as_of, viewer)
            .await?
            .into_iter()
            .map(|o| (o.id, o))
            .collect();
    if !summary_ids.is_empty() {
        for s in store::summaries_by_ids(reads, project_id, &summary_ids, as_of, viewer).await? {
            known.insert(s.id, summary_item(s));
        }
    }
    Ok(hits
        .into_iter()
        .filter_map(|h| known.remove(&h.id).map(|o| (o, h)))
        .collect())
}

/// A summary as an item shown in full: its prompt as the title, what was
/// learned, done and left to do as facts.
fn summary_item(s: SummaryItem) -> ObservationItem {
    let facts = [
        ("learned", &s.learned),
        ("done", &s.completed),
        ("next", &s.next_steps),
    ]
    .into_iter()
    .filter(|(_, t)| !t.trim().is_empty())
    .map(|(label, t)| format!("{label}: {}", t.trim()))
    .collect();
    ObservationItem {
        id: s.id,
        kind: format!("{} summary", s.scope),
        title: s.request,
        subtitle: String::new(),
        facts,
        narrative: String::new(),
        files_read: vec![],
        files_modified: vec![],
        created_at: s.created_at,
        state: crate::memory::lifecycle::MemoryState::Live,
        root: None,
    }
}

/// Branches every session works on: memories of them say nothing of the work at hand.
fn is_default_branch(branch: &str) -> bool {
    matches!(branch, "main" | "master" | "trunk" | "develop" | "dev" | "HEAD")
}
