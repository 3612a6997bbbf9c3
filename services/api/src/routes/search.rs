//! Search, timeline and fetch by ids over HTTP: claude-mem's
//! `POST /v1/search`, and `GET /v1/search`, `GET /v1/timeline`,
//! `GET /v1/observations` with the parameters of the MCP tools. The
//! behaviour lives in `crate::search`; these handlers parse and check input
//! (422 `invalid_field` / `invalid_cursor`) and resolve the project.

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::ObservationDto,
    dto::search::HitDto,
    error::{ApiError, ApiResult},
    extract::{Json, Query},
    search::{self, Anchor, Filters, Order, SearchRequest, params},
    state::AppState,
};

/// Hits per page unless asked.
const DEFAULT_LIMIT: i64 = 20;
/// Observations on each side of a timeline's anchor unless asked.
const DEFAULT_DEPTH: i64 = 5;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::unprocessable("invalid_field", message)
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchInput {
    /// Project id or slug.
    pub project_id: String,
    /// Words to find (`"a phrase"`, `or`, `-word` work); blank lists the newest.
    pub query: String,
    /// 1..=100 (default 20).
    pub limit: Option<i64>,
    /// Only observations of sessions from this platform source.
    pub platform_source: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct ObservationsResponse {
    pub observations: Vec<ObservationDto>,
}

/// Search a project's observations (claude-mem's shape): best first, by
/// weighted text rank and recency; summaries are not included.
#[utoipa::path(post, path = "/v1/search", tag = "memory", request_body = SearchInput,
    responses((status = 200, body = ObservationsResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn post_search(
    State(state): State<AppState>,
    auth: Auth,
    Json(input): Json<SearchInput>,
) -> ApiResult<Json<ObservationsResponse>> {
    auth.require(Scope::Read)?;
    let limit = params::limit(input.limit, DEFAULT_LIMIT)?;
    let project = auth.project(&state, Some(&input.project_id)).await?;
    let platform_source = input
        .platform_source
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    let page = search::search(
        &state,
        &SearchRequest {
            project_id: project.id,
            query: Some(input.query),
            filters: Filters {
                platform_source,
                viewer: auth.viewer(),
                ..Filters::default()
            },
            include_summaries: false,
            order: Order::Relevance,
            limit,
            cursor: None,
            mode: None,
            as_of: None,
        },
    )
    .await?;
    let observations = page
        .hits
        .into_iter()
        .filter_map(|hit| match hit {
            search::Hit::Observation { row, .. } => Some(row.into()),
            search::Hit::Summary { .. } => None,
        })
        .collect();
    Ok(Json(ObservationsResponse { observations }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Project id or slug; a project token's own project when absent.
    #[serde(alias = "project")]
    pub project_id: Option<String>,
    /// Words to find (`"a phrase"`, `or`, `-word` work); absent or blank lists by the filters alone.
    pub query: Option<String>,
    /// Observation types, comma-separated (any of). Leaves summaries out.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Concepts, comma-separated (any of). Leaves summaries out.
    pub concept: Option<String>,
    /// A file read or modified: the exact path, or a path ending in `/<file>`. Leaves summaries out.
    pub file: Option<String>,
    /// A server session id.
    pub session_id: Option<String>,
    /// The agent of the session (`claude-code`, `cursor`, …).
    pub agent: Option<String>,
    /// The member the memory came from (`GET /v1/admin/members`, `whoami`).
    pub member_id: Option<Uuid>,
    /// Created at or after: RFC 3339, `YYYY-MM-DD` or epoch milliseconds.
    pub date_start: Option<String>,
    /// Created at or before: RFC 3339, `YYYY-MM-DD` (the whole day) or epoch milliseconds.
    pub date_end: Option<String>,
    /// `relevance` (default), `newest` or `oldest`.
    pub order_by: Option<String>,
    /// 1..=100 (default 20).
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Start at this many hits in (instead of a cursor).
    pub offset: Option<i64>,
    /// Turn and session summaries are hits too (default true).
    pub summaries: Option<bool>,
    /// How a query is matched (with `orderBy=relevance`): `fulltext` (its words), `vector`
    /// (its meaning; 422 when the server has no embeddings) or `hybrid` (both, their
    /// normalised scores weighted 0.4 words to 0.6 meaning). Default: `hybrid` when the
    /// server has embeddings, else `fulltext`.
    pub mode: Option<String>,
    /// As of this commit (7 to 64 hex digits of an id the project's hooks
    /// reported): only memories written while it was the project's newest
    /// commit or before (until the hooks first reported a later one),
    /// with recency measured from then.
    pub commit: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// Best first (or in the order asked).
    pub results: Vec<HitDto>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

fn trimmed(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// Search a project's memory: observations and summaries, filtered, ranked, paged.
#[utoipa::path(get, path = "/v1/search", tag = "memory", params(SearchQuery),
    responses((status = 200, body = SearchResponse), (status = 400, body = crate::error::ErrorBody),
              (status = 404, body = crate::error::ErrorBody), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_search(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<SearchQuery>,
) -> ApiResult<Json<SearchResponse>> {
    auth.require(Scope::Read)?;
    let limit = params::limit(q.limit, DEFAULT_LIMIT)?;
    let order = params::order(q.order_by.as_deref())?;
    let since = params::optional_time("dateStart", q.date_start.as_deref(), false)?;
    let until = params::optional_time("dateEnd", q.date_end.as_deref(), true)?;
    let session_id = match trimmed(q.session_id) {
        Some(s) => Some(
            s.parse::<Uuid>()
                .map_err(|_| invalid(format!("`sessionId` is a server session id (UUID), not `{s}`")))?,
        ),
        None => None,
    };
    let cursor = match (trimmed(q.cursor), q.offset) {
        (Some(_), Some(_)) => return Err(invalid("send `cursor` or `offset`, not both")),
        (Some(cursor), None) => Some(cursor),
        (None, Some(offset)) if (0..=search::cursor::MAX_OFFSET).contains(&offset) => {
            Some(search::at_offset(offset))
        }
        (None, Some(_)) => {
            return Err(invalid(format!(
                "`offset` must be between 0 and {}",
                search::cursor::MAX_OFFSET
            )));
        }
        (None, None) => None,
    };
    let filters = Filters {
        kinds: params::list("type", q.kind.as_deref())?,
        concepts: params::list("concept", q.concept.as_deref())?,
        file: trimmed(q.file),
        session_id,
        agent: trimmed(q.agent),
        platform_source: None,
        member_id: q.member_id,
        viewer: auth.viewer(),
        since,
        until,
    };
    let mode = search::Mode::parse(q.mode.as_deref())?;
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let as_of = match trimmed(q.commit) {
        Some(commit) => Some(as_of_commit(&state, project.id, &commit).await?),
        None => None,
    };
    let page = search::search(
        &state,
        &SearchRequest {
            project_id: project.id,
            query: q.query,
            filters,
            include_summaries: q.summaries.unwrap_or(true),
            order,
            limit,
            cursor,
            mode,
            as_of,
        },
    )
    .await?;
    Ok(Json(SearchResponse {
        results: page.hits.into_iter().map(Into::into).collect(),
        next_cursor: page.next_cursor,
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TimelineQuery {
    /// Project id or slug; a project token's own project when absent.
    #[serde(alias = "project")]
    pub project_id: Option<String>,
    /// The observation at the centre. Send this or `query`.
    pub anchor: Option<String>,
    /// Centre on the best hit of this query instead.
    pub query: Option<String>,
    /// Older observations to show, 0..=50 (default 5).
    pub before: Option<i64>,
    /// Newer observations to show, 0..=50 (default 5).
    pub after: Option<i64>,
    /// One member's observations only (around the anchor, and a `query`'s best hit).
    pub member_id: Option<Uuid>,
}

#[derive(Serialize, ToSchema)]
pub struct TimelineResponse {
    /// The observation at the centre.
    pub anchor: Uuid,
    /// Oldest first; the anchor is among them.
    pub observations: Vec<ObservationDto>,
}

/// The observations just before and after one, in time order.
#[utoipa::path(get, path = "/v1/timeline", tag = "memory", params(TimelineQuery),
    responses((status = 200, body = TimelineResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_timeline(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<TimelineQuery>,
) -> ApiResult<Json<TimelineResponse>> {
    auth.require(Scope::Read)?;
    let before = params::depth("before", q.before, DEFAULT_DEPTH)?;
    let after = params::depth("after", q.after, DEFAULT_DEPTH)?;
    let anchor = match (trimmed(q.anchor), trimmed(q.query)) {
        (Some(id), None) => Anchor::Observation(
            id.parse()
                .map_err(|_| invalid(format!("`anchor` is an observation id (UUID), not `{id}`")))?,
        ),
        (None, Some(query)) => Anchor::Query(query),
        _ => return Err(invalid("send one of `anchor` (an observation id) or `query`")),
    };
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let timeline = search::timeline(
        &state,
        project.id,
        anchor,
        before,
        after,
        auth.viewer(),
        q.member_id,
    )
    .await?
    .ok_or_else(|| ApiError::not_found("observation_not_found", "no such observation in this project"))?;
    Ok(Json(TimelineResponse {
        anchor: timeline.anchor,
        observations: timeline.items.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ObservationsQuery {
    /// Project id or slug; a project token's own project when absent.
    #[serde(alias = "project")]
    pub project_id: Option<String>,
    /// Observation ids, comma-separated, at most 100.
    pub ids: Option<String>,
}

/// Observations by id, in the order asked; ids not in the project are skipped.
#[utoipa::path(get, path = "/v1/observations", tag = "memory", params(ObservationsQuery),
    responses((status = 200, body = ObservationsResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_observations(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<ObservationsQuery>,
) -> ApiResult<Json<ObservationsResponse>> {
    auth.require(Scope::Read)?;
    let ids = params::ids("ids", q.ids.as_deref().unwrap_or(""))?;
    if ids.is_empty() {
        return Err(invalid("`ids` names no observation"));
    }
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let rows = search::by_ids(&state.pool, project.id, &ids, auth.viewer()).await?;
    Ok(Json(ObservationsResponse {
        observations: rows.into_iter().map(Into::into).collect(),
    }))
}

/// Until when `commit` was the project's newest (`code::commit_seen_at`): 422 for a malformed id
/// (`invalid_field`), one the project never saw (`unknown_commit`) or an
/// abbreviation of several (`ambiguous_commit`).
pub async fn as_of_commit(
    state: &AppState,
    project_id: Uuid,
    commit: &str,
) -> ApiResult<chrono::DateTime<chrono::Utc>> {
    let commit = commit.to_ascii_lowercase();
    if !(7..=64).contains(&commit.len()) || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid("`commit` is 7 to 64 hexadecimal digits of a commit id"));
    }
    match crate::store::code::commit_seen_at(&state.pool, project_id, &commit).await? {
        Ok(Some(at)) => Ok(at),
        Ok(None) => Err(ApiError::unprocessable(
            "unknown_commit",
            format!("this project's hooks never reported commit `{commit}`"),
        )),
        Err(_) => Err(ApiError::unprocessable(
            "ambiguous_commit",
            format!("`{commit}` abbreviates more than one commit: give more digits"),
        )),
    }
}
