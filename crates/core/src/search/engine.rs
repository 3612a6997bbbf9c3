//! A ranked search through the retrieval engine (`cairn_retrieval`): every
//! memory of the project, by words, by meaning or both, with the filters
//! the engine holds (type, session, dates, states, as-of). A search that
//! needs more (concept, file, agent, platform, member, quoted phrases) is
//! narrowed first by Postgres — every memory that passes those, no window —
//! and the engine ranks what is left. Only a project the index's memory
//! bound refused is answered by the Postgres statement alone (`sql`).

use std::{collections::HashSet, sync::Arc};

use chrono::Utc;

use super::{Cursor, Filters, SearchRequest, mode::Mode};
use crate::error::{Error, Result};
use crate::store::search::HitKey;

/// Whether the engine holds every filter of a search with these filters
/// and text; when not, Postgres narrows it first ([`ranked`]'s `only`).
pub fn holds(filters: &Filters, text: &str) -> bool {
    filters.concepts.is_empty()
        && filters.file.is_none()
        && filters.agent.is_none()
        && filters.platform_source.is_none()
        && filters.member_id.is_none()
        && !text.contains('"')
}

/// The page's keys (`offset .. offset + limit`, plus one more when there is
/// one) and the clock, or `None` when the engine cannot take the project.
/// `only`: the memories Postgres narrowed the search to, when it has a
/// filter the engine does not hold ([`holds`]).
#[allow(clippy::too_many_arguments)]
pub async fn ranked(
    state: &crate::engine::Engine,
    request: &SearchRequest,
    mode: Mode,
    wanted: &str,
    excluded: &str,
    cursor: Cursor,
    limit: i64,
    only: Option<Arc<HashSet<uuid::Uuid>>>,
) -> Result<Option<Vec<HitKey>>> {
    let text = request.query.as_deref().unwrap_or_default();
    let vector = match (&state.embedder, mode) {
        (Some(embedder), Mode::Vector | Mode::Hybrid) => {
            match state.retrieval.embed_query(embedder, text).await {
                Ok(v) => Some(v),
                Err(e) if mode == Mode::Hybrid => {
                    tracing::warn!(error = %e, "query not embedded: answered by words");
                    None
                }
                Err(e) => {
                    tracing::warn!(error = %e, "query not embedded");
                    return Err(Error::new(
                        http::StatusCode::SERVICE_UNAVAILABLE,
                        "embeddings_unavailable",
                        "the query could not be embedded; try `mode=fulltext` or `hybrid`",
                    ));
                }
            }
        }
        _ => None,
    };
    let as_of = cursor.as_of.unwrap_or_else(Utc::now);
    let f = &request.filters;
    let filters = cairn_retrieval::Filters {
        kinds: f.kinds.clone(),
        session_id: f.session_id,
        since: f.since,
        until: f.until,
        viewer: f.viewer.member_id,
        sees_all: f.viewer.sees_all,
        only,
    };
    let query = cairn_retrieval::Query {
        project_id: request.project_id,
        text: wanted,
        exclude: excluded,
        vector: vector.as_deref().map(Vec::as_slice),
        filters: &filters,
        as_of,
        summaries: request.include_summaries && request.filters.admits_summaries(),
        mode: match mode {
            Mode::Fulltext => cairn_retrieval::Mode::Lexical,
            Mode::Vector => cairn_retrieval::Mode::Semantic,
            Mode::Hybrid if vector.is_some() => cairn_retrieval::Mode::Hybrid,
            Mode::Hybrid => cairn_retrieval::Mode::Lexical,
        },
        want: (cursor.offset + limit + 1) as usize,
        lexical_weight: None,
    };
    let hits = state.retrieval.search(&query).await.map_err(failed)?;
    Ok(hits.map(|hits| {
        hits.into_iter()
            .skip(cursor.offset as usize)
            .map(|h| HitKey {
                source: h.source.as_str().to_string(),
                id: h.id,
                score: h.score,
                as_of,
            })
            .collect()
    }))
}

/// A database error the engine met is the database's (503 when it is
/// away); anything else is logged and internal.
pub fn failed(e: anyhow::Error) -> Error {
    match e.downcast::<sqlx::Error>() {
        Ok(db) => db.into(),
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "retrieval failed");
            Error::internal()
        }
    }
}
