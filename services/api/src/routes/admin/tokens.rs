//! Mint (the secret is shown once), list and revoke API tokens.

use axum::{extract::State, http::StatusCode};
use cairn_shared::{
    auth::Scope,
    tenancy::{
        NewToken, projects,
        tokens::{self},
    },
    time::from_epoch_ms,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::projects::TeamQuery;
use crate::{
    auth::Auth,
    dto::TokenDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewTokenInput {
    pub name: String,
    /// Defaults to the caller's team; another team needs superadmin.
    pub team_id: Option<Uuid>,
    /// Project id or slug: a project token can touch only that project.
    pub project_id: Option<String>,
    /// Any of `ingest`, `read`, `admin` (and `superadmin`, by a superadmin).
    pub scopes: Vec<String>,
    pub expires_at_epoch: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct MintedTokenResponse {
    pub token: TokenDto,
    /// The bearer secret. Shown once; only a salted hash is kept.
    pub secret: String,
}

#[derive(Serialize, ToSchema)]
pub struct TokenList {
    pub tokens: Vec<TokenDto>,
}

#[derive(Serialize, ToSchema)]
pub struct TokenResponse {
    pub token: TokenDto,
}

/// Mint a token (admin). The answer holds the secret, once.
#[utoipa::path(post, path = "/v1/admin/tokens", tag = "admin", request_body = NewTokenInput,
    responses((status = 201, body = MintedTokenResponse), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn mint_token(
    State(state): State<AppState>,
    auth: Auth,
    Json(body): Json<NewTokenInput>,
) -> ApiResult<(StatusCode, Json<MintedTokenResponse>)> {
    let team_id = super::acting_team(&auth, body.team_id)?;
    if body.name.trim().is_empty() || body.name.len() > 200 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`name` must be 1 to 200 characters",
        ));
    }
    let scopes = body
        .scopes
        .iter()
        .map(|s| Scope::parse(s).map_err(|e| ApiError::unprocessable("invalid_scope", e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    if scopes.is_empty() {
        return Err(ApiError::unprocessable(
            "invalid_scope",
            "a token needs at least one scope",
        ));
    }
    if scopes.contains(&Scope::Superadmin) && !auth.scopes.contains(&Scope::Superadmin) {
        return Err(ApiError::forbidden(
            "insufficient_scope",
            "only a superadmin can mint superadmin tokens",
        ));
    }
    let project_id = match (&body.project_id, auth.project_id) {
        (Some(p), _) => {
            let project = projects::find_project(&state.pool, team_id, p)
                .await?
                .filter(|p| auth.project_id.is_none_or(|own| own == p.id))
                .ok_or_else(|| ApiError::not_found("project_not_found", "no such project"))?;
            Some(project.id)
        }
        // A project admin mints only for its own project.
        (None, own) => own,
    };
    let expires_at = match body.expires_at_epoch {
        Some(ms) => {
            let at = from_epoch_ms(ms).ok_or_else(|| {
                ApiError::unprocessable("invalid_field", "`expiresAtEpoch` is out of range")
            })?;
            if at <= chrono::Utc::now() {
                return Err(ApiError::unprocessable(
                    "invalid_field",
                    "`expiresAtEpoch` is in the past",
                ));
            }
            Some(at)
        }
        None => None,
    };
    let mut tx = state.pool.begin().await?;
    let minted = tokens::mint_token(
        &mut *tx,
        &state.signer,
        NewToken {
            team_id,
            project_id,
            name: body.name.trim().into(),
            scopes,
            expires_at,
            created_by: Some(auth.token_id),
            member_id: None,
            kind: tokens::TokenKind::Service,
            host: None,
        },
    )
    .await?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id,
            kind: "api_token",
            id: minted.token.id,
        },
        "token.mint",
        serde_json::json!({"scopes": minted.token.scopes, "projectId": project_id}),
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(MintedTokenResponse {
            token: minted.token.into(),
            secret: minted.secret,
        }),
    ))
}

/// List a team's tokens (never their secrets).
#[utoipa::path(get, path = "/v1/admin/tokens", tag = "admin", params(TeamQuery),
    responses((status = 200, body = TokenList)), security(("bearer" = [])))]
pub async fn list_tokens(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<TokenList>> {
    let team_id = super::acting_team(&auth, q.team_id)?;
    let tokens = tokens::list_tokens(&state.pool, team_id).await?;
    let visible = tokens.into_iter().filter(|t| manages(&auth, t));
    Ok(Json(TokenList {
        tokens: visible.map(Into::into).collect(),
    }))
}

/// Whether the caller may see and revoke this token: one of its project (a
/// project admin) and with no scope the caller lacks. Others answer 404.
fn manages(auth: &Auth, token: &tokens::ApiToken) -> bool {
    (auth.project_id.is_none() || token.project_id == auth.project_id) && auth.covers(&token.scopes())
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct RevokeQuery {
    pub team_id: Option<Uuid>,
}

/// Revoke a token. It stops working on this replica at once and on every
/// other within the auth cache's lifetime (2 s by default).
#[utoipa::path(post, path = "/v1/admin/tokens/{id}/revoke", tag = "admin", params(("id" = Uuid, Path), RevokeQuery),
    responses((status = 200, body = TokenResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn revoke_token(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Query(q): Query<RevokeQuery>,
) -> ApiResult<Json<TokenResponse>> {
    let team_id = super::acting_team(&auth, q.team_id)?;
    let mut tx = state.pool.begin().await?;
    let token = tokens::revoke_token(&mut *tx, team_id, id)
        .await?
        .filter(|t| manages(&auth, t))
        .ok_or_else(|| ApiError::not_found("token_not_found", "no such token"))?;
    let sessions = tokens::sessions_of(&mut *tx, team_id, id).await?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id: token.project_id,
            kind: "api_token",
            id,
        },
        "token.revoke",
        serde_json::json!({}),
    )
    .await?;
    tx.commit().await?;
    state.tokens.forget(id);
    sessions.into_iter().for_each(|s| state.tokens.forget(s));
    Ok(Json(TokenResponse { token: token.into() }))
}
