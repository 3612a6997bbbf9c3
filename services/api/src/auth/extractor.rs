//! The `Auth` extractor: `Authorization: Bearer <token>` or `X-Api-Key`, or
//! else the dashboard's `cairn_session` cookie (whose unsafe requests must
//! carry `X-Cairn-Csrf`).
//! No credential → 401; a token that is malformed, unknown, revoked or expired → 403.

use axum::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    http::request::Parts,
};
use cairn_shared::{
    auth::Scope,
    tenancy::{TokenKind, tokens},
};
use uuid::Uuid;

use super::session_cookie::{self, SessionKeys};
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
    /// The person behind the token, for a member's laptop or dashboard session.
    pub member_id: Option<Uuid>,
    pub kind: TokenKind,
}

impl Auth {
    pub fn from_token(token: &tokens::ApiToken) -> Self {
        Self {
            token_id: token.id,
            team_id: token.team_id,
            project_id: token.project_id,
            scopes: token.scopes(),
            expires_at: token.expires_at,
            member_id: token.member_id,
            kind: token.kind,
        }
    }

    /// Who reads memory: an admin (a reviewer) sees every memory; a member
    /// the team's and their own private ones; a service token the team's.
    pub fn viewer(&self) -> cairn_core::tenancy::Viewer {
        cairn_core::tenancy::Viewer {
            member_id: self.member_id,
            sees_all: self.covers(&[Scope::Admin]),
        }
    }

    /// Who the events this caller sends come from.
    pub fn actor(&self) -> cairn_core::ingest::Actor {
        cairn_core::ingest::Actor {
            token_id: Some(self.token_id),
            member_id: self.member_id,
        }
    }

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

    /// Whether the caller may read the project's raw data and search it
    /// (`read`, or `admin`, which includes it).
    pub fn may_read(&self) -> bool {
        self.covers(&[Scope::Read])
    }

    /// Refuses a caller without `scope` (as [`Auth::covers`] counts it:
    /// `admin` includes `ingest` and `read`, `superadmin` everything).
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.covers(&[scope]) {
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

fn has_session(parts: &Parts) -> bool {
    session_cookie::from_headers(&parts.headers).is_some()
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
        if !has_credentials(parts)
            && let Some(cookie) = session_cookie::from_headers(&parts.headers)
        {
            return authenticate_session(state, parts, cookie)
                .await
                .inspect(crate::middleware::access_log::record_token);
        }
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
        authenticate(state, token)
            .await
            .inspect(crate::middleware::access_log::record_token)
    }
}

/// `None` without credentials; a bad credential is still refused.
impl OptionalFromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Option<Self>, ApiError> {
        if !has_credentials(parts) && !has_session(parts) {
            return Ok(None);
        }
        <Auth as FromRequestParts<AppState>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

/// Verifies a presented token (signature, row, secret, revocation, expiry):
/// the check every bearer request passes, and the dashboard's sign-in.
pub async fn authenticate(state: &AppState, token: &str) -> Result<Auth, ApiError> {
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
    admit(state, row.token)
}

/// A cookie session: its signature and expiry, the CSRF header on unsafe
/// methods, then the token row it names, as for a bearer token (cached for
/// the same short time, so a revocation ends the session just as fast).
async fn authenticate_session(state: &AppState, parts: &Parts, cookie: &str) -> Result<Auth, ApiError> {
    let keys = SessionKeys::derive(&state.signer);
    let Some(claims) = keys.verify(cookie) else {
        return Err(ApiError::unauthorized(
            "the dashboard session has expired or is not valid: sign in again",
        ));
    };
    if !parts.method.is_safe() {
        let presented = parts
            .headers
            .get(session_cookie::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !keys.csrf_matches(&claims, presented) {
            return Err(ApiError::forbidden(
                "csrf_failed",
                "a cookie-authenticated write must carry the session's `X-Cairn-Csrf` header",
            ));
        }
    }
    if let Some(auth) = state.tokens.get(claims.tid) {
        if auth.expires_at.is_some_and(|at| at <= chrono::Utc::now()) {
            return Err(ApiError::forbidden("token_expired", "the token has expired"));
        }
        return Ok(auth);
    }
    let Some(row) = tokens::load_for_auth(&state.pool, claims.tid)
        .await?
        .filter(|row| row.token.kind == TokenKind::Session)
    else {
        return Err(session_ended());
    };
    if row.token.revoked_at.is_some() {
        return Err(session_ended());
    }
    admit(state, row.token)
}

/// A session signed out of, or opened with a token since revoked.
fn session_ended() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::UNAUTHORIZED,
        "session_ended",
        "the dashboard session has ended: sign in again",
    )
}

/// A verified, unrevoked token row becomes the caller (and is cached).
fn admit(state: &AppState, token: tokens::ApiToken) -> Result<Auth, ApiError> {
    if !token.is_usable(chrono::Utc::now()) {
        return Err(ApiError::forbidden("token_expired", "the token has expired"));
    }
    let auth = Auth::from_token(&token);
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
