//! The `Auth` extractor: `Authorization: Bearer <token>` or `X-Api-Key`.
//! No credential → 401; a token that is malformed, unknown, revoked or expired → 403.

use axum::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    http::request::Parts,
};
use cairn_shared::{auth::Scope, tenancy::tokens};
use uuid::Uuid;

use crate::{error::ApiError, state::AppState};

/// The authenticated caller.
#[derive(Clone, Debug)]
pub struct Auth {
    pub token_id: Uuid,
    pub team_id: Uuid,
    /// Set for project tokens: the only project they can touch.
    pub project_id: Option<Uuid>,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Auth {
    /// True when the caller holds every scope of `scopes` (for managing
    /// another token: no one sees or touches a token that outranks it).
    /// `admin` counts as holding `ingest` and `read`; `superadmin` holds all.
    pub fn covers(&self, scopes: &[Scope]) -> bool {
        let admin = self.scopes.contains(&Scope::Admin);
        let superadmin = self.scopes.contains(&Scope::Superadmin);
        scopes.iter().all(|s| {
            superadmin || self.scopes.contains(s) || (admin && matches!(s, Scope::Ingest | Scope::Read))
        })
    }

    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.scopes.contains(&scope) || self.scopes.contains(&Scope::Superadmin) {
            Ok(())
        } else {
            Err(ApiError::forbidden(
                "insufficient_scope",
                format!("this token lacks the `{}` scope", scope.as_str()),
            ))
        }
    }
}

fn has_credentials(parts: &Parts) -> bool {
    parts.headers.contains_key(axum::http::header::AUTHORIZATION) || parts.headers.contains_key("x-api-key")
}

fn presented_token(parts: &Parts) -> Option<&str> {
    let headers = &parts.headers;
    if let Some(value) = headers.get(axum::http::header::AUTHORIZATION) {
        let value = value.to_str().ok()?.trim();
        let (scheme, token) = value.split_once(' ')?;
        return scheme.eq_ignore_ascii_case("bearer").then_some(token.trim());
    }
    headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(token) = presented_token(parts).filter(|t| !t.is_empty()) else {
            return Err(if has_credentials(parts) {
                ApiError::forbidden(
                    "invalid_token",
                    "the Authorization header must be `Bearer <token>`",
                )
            } else {
                ApiError::unauthorized("send `Authorization: Bearer <token>` or `X-Api-Key`")
            });
        };
        authenticate(state, token).await
    }
}

/// `None` without credentials; a bad credential is still refused.
impl OptionalFromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Option<Self>, ApiError> {
        if !has_credentials(parts) {
            return Ok(None);
        }
        <Auth as FromRequestParts<AppState>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

async fn authenticate(state: &AppState, token: &str) -> Result<Auth, ApiError> {
    let invalid = || ApiError::forbidden("invalid_token", "the token is not valid");
    let claims = state.signer.verify(token).map_err(|_| invalid())?;
    let expired = || ApiError::forbidden("token_expired", "the token has expired");
    if let Some(auth) = state.tokens.get(claims.jti) {
        if auth.expires_at.is_some_and(|at| at <= chrono::Utc::now()) {
            return Err(expired());
        }
        return Ok(auth);
    }
    if let Some(refused) = state.tokens.refused(token) {
        return Err(refused);
    }
    let Some(row) = tokens::load_for_auth(&state.pool, claims.jti).await? else {
        return Err(state
            .tokens
            .refuse(token, "invalid_token", "the token is not valid"));
    };
    if !cairn_shared::auth::verify_secret(token, &row.secret_salt, &row.secret_hash) {
        return Err(state
            .tokens
            .refuse(token, "invalid_token", "the token is not valid"));
    }
    if row.token.revoked_at.is_some() {
        return Err(state
            .tokens
            .refuse(token, "token_revoked", "the token has been revoked"));
    }
    if !row.token.is_usable(chrono::Utc::now()) {
        return Err(expired());
    }
    let auth = Auth {
        token_id: row.token.id,
        team_id: row.token.team_id,
        project_id: row.token.project_id,
        scopes: row.token.scopes(),
        expires_at: row.token.expires_at,
    };
    state.tokens.put(auth.clone());
    let pool = state.pool.clone();
    let id = auth.token_id;
    tokio::spawn(async move {
        if let Err(e) = tokens::touch_last_used(&pool, id).await {
            tracing::debug!(error = %e, "could not record token use");
        }
    });
    Ok(auth)
}
