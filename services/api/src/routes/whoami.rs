//! `GET /v1/whoami`: what the presented token is (for `cairn doctor`), and
//! `GET /v1/projects/resolve`: which project a hook from a directory lands in.

use axum::extract::State;
use cairn_shared::{
    tenancy::{members, projects, tokens},
    time::opt_epoch_ms,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::hooks::HookQuery;
use crate::{
    auth::{Auth, MatchedBy},
    error::{ApiError, ApiResult},
    extract::{Json, Query},
    state::AppState,
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WhoAmI {
    pub token_id: Uuid,
    /// The name it was minted with.
    pub name: String,
    pub team_id: Uuid,
    /// Set for project tokens.
    pub project_id: Option<Uuid>,
    pub scopes: Vec<String>,
    pub expires_at_epoch: Option<i64>,
    /// `service`, `laptop` (a member's machine) or `session` (a dashboard sign-in).
    pub kind: String,
    /// The person the token belongs to, if any.
    pub member: Option<MemberRef>,
}

/// A member as other answers name them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberRef {
    pub id: Uuid,
    pub email: Option<String>,
    pub name: Option<String>,
    /// `member` or `admin`.
    pub role: String,
}

impl From<members::Member> for MemberRef {
    fn from(m: members::Member) -> Self {
        Self {
            id: m.id,
            email: m.email,
            name: m.name,
            role: m.role.as_str().into(),
        }
    }
}

/// The token's identity and scopes (any valid token).
#[utoipa::path(get, path = "/v1/whoami", tag = "projects",
    responses((status = 200, body = WhoAmI, description = "The token"),
              (status = 401, body = crate::error::ErrorBody, description = "No credential"),
              (status = 403, body = crate::error::ErrorBody, description = "Unknown, revoked or expired token")),
    security(("bearer" = [])))]
pub async fn whoami(State(state): State<AppState>, auth: Auth) -> ApiResult<Json<WhoAmI>> {
    let name = tokens::token_name(&state.pool, auth.team_id, auth.token_id)
        .await?
        .unwrap_or_default();
    let member = match auth.member_id {
        Some(id) => members::get(&state.pool, auth.team_id, id)
            .await?
            .map(MemberRef::from),
        None => None,
    };
    Ok(Json(WhoAmI {
        token_id: auth.token_id,
        name,
        team_id: auth.team_id,
        project_id: auth.project_id,
        scopes: auth.scopes.iter().map(|s| s.as_str().to_string()).collect(),
        expires_at_epoch: opt_epoch_ms(auth.expires_at),
        kind: auth.kind.as_str().into(),
        member,
    }))
}

/// The presented token revokes itself (`cairn logout`), with the dashboard
/// sessions opened with it; audited.
#[utoipa::path(delete, path = "/v1/whoami", tag = "projects",
    responses((status = 204, description = "Revoked"),
              (status = 401, body = crate::error::ErrorBody, description = "No credential"),
              (status = 403, body = crate::error::ErrorBody, description = "Unknown, revoked or expired token")),
    security(("bearer" = [])))]
pub async fn revoke_self(State(state): State<AppState>, auth: Auth) -> ApiResult<axum::http::StatusCode> {
    let mut tx = state.pool.begin().await?;
    let revoked = tokens::revoke_token(&mut *tx, auth.team_id, auth.token_id).await?;
    let sessions = tokens::sessions_of(&mut *tx, auth.team_id, auth.token_id).await?;
    if let Some(token) = revoked {
        super::admin::record(
            &mut *tx,
            &auth,
            super::admin::Target {
                team_id: auth.team_id,
                project_id: token.project_id,
                kind: "api_token",
                id: token.id,
            },
            "token.revoke",
            serde_json::json!({"via": "self"}),
        )
        .await?;
    }
    tx.commit().await?;
    state.tokens.forget(auth.token_id);
    sessions.into_iter().for_each(|s| state.tokens.forget(s));
    Ok(axum::http::StatusCode::NO_CONTENT)
}

#[derive(Serialize, ToSchema)]
pub struct ResolvedProject {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    pub project: ResolvedProject,
    pub matched_by: MatchedBy,
}

/// Which project a hook with these parameters lands in (any valid token):
/// the token's own, the one named, or the team's rules applied to the git
/// remote, repository root and working directory.
#[utoipa::path(get, path = "/v1/projects/resolve", tag = "projects", params(HookQuery),
    responses((status = 200, body = Resolution, description = "The project"),
              (status = 404, body = crate::error::ErrorBody,
               description = "`project_unresolved` (no rule matches) or `project_not_found`")),
    security(("bearer" = [])))]
pub async fn resolve_project(
    State(state): State<AppState>,
    auth: Auth,
    Query(query): Query<HookQuery>,
) -> ApiResult<Json<Resolution>> {
    let (project, matched_by) = auth
        .project_at(&state, query.project.as_deref(), &query.locator(None))
        .await?;
    let row = projects::find_project(&state.pool, project.team_id, &project.id.to_string())
        .await?
        .ok_or_else(|| ApiError::not_found("project_not_found", "no such project"))?;
    Ok(Json(Resolution {
        project: ResolvedProject {
            id: row.id,
            slug: row.slug,
            name: row.name,
        },
        matched_by,
    }))
}
