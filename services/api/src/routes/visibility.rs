//! Private until shared (`memoryVisibility: private-first`): promote a
//! memory to the team (its author, or an admin reviewing), take a promotion
//! back, reject one in review (it stays private and the project's rule
//! never promotes it), and the review queue. Each change is audited and can
//! be undone by the opposite one.

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::visibility::{self, Shared, Whose},
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedDto {
    pub id: Uuid,
    /// `observation` or `summary`.
    pub source: String,
    /// The author.
    pub member_id: Option<Uuid>,
    pub title: String,
    /// `private` or `team`.
    pub visibility: String,
    pub created_at_epoch: i64,
}

impl From<Shared> for SharedDto {
    fn from(s: Shared) -> Self {
        Self {
            id: s.id,
            source: s.source,
            member_id: s.member_id,
            title: s.title,
            visibility: s.visibility,
            created_at_epoch: s.created_at.timestamp_millis(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SharedResponse {
    pub memory: SharedDto,
}

/// An admin reviews any memory; anyone else changes their own only.
fn whose(auth: &Auth) -> Result<Whose, ApiError> {
    if auth.covers(&[Scope::Admin]) {
        return Ok(Whose::Any);
    }
    auth.require(Scope::Read)?;
    auth.member_id.map(Whose::Own).ok_or_else(|| {
        ApiError::forbidden(
            "member_required",
            "only a memory's author (a member's token) or an admin may share it",
        )
    })
}

/// Which way a memory moves between its author and the team.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// private → team.
    Promote,
    /// team → private: the promotion taken back.
    Unpromote,
}

impl Share {
    fn states(self) -> (&'static str, &'static str) {
        match self {
            Self::Promote => ("private", "team"),
            Self::Unpromote => ("team", "private"),
        }
    }

    fn action(self) -> &'static str {
        match self {
            Self::Promote => "memory.promote",
            Self::Unpromote => "memory.unpromote",
        }
    }
}

/// Moves one memory (its author's own, or any for an admin) and audits it;
/// the routes, the CLI (through them) and the MCP `share` tool call this.
pub async fn share(state: &AppState, auth: &Auth, id: Uuid, way: Share) -> Result<Shared, ApiError> {
    let whose = whose(auth)?;
    let (from, to) = way.states();
    let scope = visibility::Scope {
        team_id: auth.team_id,
        project_id: auth.project_filter(),
    };
    let by = format!("token:{}", auth.token_id);
    let mut tx = state.pool.begin().await?;
    let memory = visibility::set(&mut tx, scope, id, from, to, whose, &by)
        .await?
        .ok_or_else(|| {
            ApiError::not_found(
                "memory_not_found",
                format!(
                    "no {from} memory of yours with this id (a memory of a private-first project's member)"
                ),
            )
        })?;
    audit(&mut tx, auth, &memory, way.action()).await?;
    tx.commit().await?;
    Ok(memory)
}

async fn audit(tx: &mut sqlx::PgConnection, auth: &Auth, memory: &Shared, action: &str) -> sqlx::Result<()> {
    super::admin::record(
        &mut *tx,
        auth,
        super::admin::Target {
            team_id: auth.team_id,
            project_id: Some(memory.project_id),
            kind: "memory",
            id: memory.id,
        },
        action,
        serde_json::json!({"source": memory.source, "author": memory.member_id}),
    )
    .await
}

/// Share a private memory with the team (its author, or an admin).
#[utoipa::path(post, path = "/v1/memories/{id}/promote", tag = "memories", params(("id" = Uuid, Path)),
    responses((status = 200, body = SharedResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn promote(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<SharedResponse>> {
    let memory = share(&state, &auth, id, Share::Promote).await?;
    Ok(Json(SharedResponse {
        memory: memory.into(),
    }))
}

/// Take a promotion back: the memory is its author's again.
#[utoipa::path(post, path = "/v1/memories/{id}/unpromote", tag = "memories", params(("id" = Uuid, Path)),
    responses((status = 200, body = SharedResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn unpromote(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<SharedResponse>> {
    let memory = share(&state, &auth, id, Share::Unpromote).await?;
    Ok(Json(SharedResponse {
        memory: memory.into(),
    }))
}

/// Reject a memory in review (admin): it stays private, and the project's
/// rule never promotes it; promoting it later undoes the rejection.
#[utoipa::path(post, path = "/v1/memories/{id}/reject", tag = "memories", params(("id" = Uuid, Path)),
    responses((status = 200, body = SharedResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn reject(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<SharedResponse>> {
    auth.require(Scope::Admin)?;
    let scope = visibility::Scope {
        team_id: auth.team_id,
        project_id: auth.project_filter(),
    };
    let mut tx = state.pool.begin().await?;
    let memory = visibility::reject(&mut tx, scope, id)
        .await?
        .ok_or_else(|| ApiError::not_found("memory_not_found", "no private memory with this id"))?;
    audit(&mut tx, &auth, &memory, "memory.reject").await?;
    tx.commit().await?;
    Ok(Json(SharedResponse {
        memory: memory.into(),
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReviewQuery {
    /// Project id or slug; a project token's own project when absent.
    pub project_id: Option<String>,
    /// 1..=500 (default 100).
    pub limit: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct ReviewResponse {
    pub memories: Vec<SharedDto>,
}

/// The review queue (admin): private memories nobody rejected, oldest first.
#[utoipa::path(get, path = "/v1/review", tag = "memories", params(ReviewQuery),
    responses((status = 200, body = ReviewResponse), (status = 403, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn review(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<ReviewQuery>,
) -> ApiResult<Json<ReviewResponse>> {
    auth.require(Scope::Admin)?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::unprocessable("invalid_field", "`limit` is 1..=500"));
    }
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let memories = visibility::pending(&state.pool, project.id, limit).await?;
    Ok(Json(ReviewResponse {
        memories: memories.into_iter().map(Into::into).collect(),
    }))
}
