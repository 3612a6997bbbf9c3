//! `/dashboard/session`: sign in with a token (JSON `{"token"}` or a form
//! field `token`) for a cookie session, ask who the session is and its CSRF
//! value, sign out.

use axum::{
    Form, Json as AxumJson,
    extract::{FromRequest, Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use cairn_shared::tenancy::{teams, tokens};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::settings;
use crate::{
    auth::{
        Auth, authenticate,
        session_cookie::{self, SessionKeys},
    },
    error::ApiError,
    state::AppState,
};

#[derive(Deserialize)]
pub struct SignIn {
    token: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    token_id: Uuid,
    name: String,
    team_id: Uuid,
    /// The team's slug and name, for the page's header.
    team_slug: String,
    team_name: String,
    project_id: Option<Uuid>,
    scopes: Vec<String>,
    /// When the session ends (epoch milliseconds).
    session_expires_at_epoch: i64,
    /// The value unsafe requests must send as `X-Cairn-Csrf`.
    csrf: String,
}

/// A sign-in from another site is refused (the cookie is `SameSite=Strict`
/// anyway; this keeps a foreign page from signing a browser in).
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or(origin);
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

async fn read_token(request: Request, state: &AppState) -> Result<(String, bool), ApiError> {
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let bad = |_| {
        ApiError::bad_request(
            "invalid_sign_in",
            "send a JSON body {\"token\": \"…\"} or a form field `token`",
        )
    };
    if content_type.starts_with("application/x-www-form-urlencoded") {
        let Form(body) = Form::<SignIn>::from_request(request, state)
            .await
            .map_err(|e| bad(e.to_string()))?;
        Ok((body.token, true))
    } else {
        let AxumJson(body) = AxumJson::<SignIn>::from_request(request, state)
            .await
            .map_err(|e| bad(e.to_string()))?;
        Ok((body.token, false))
    }
}

async fn view(
    state: &AppState,
    auth: &Auth,
    claims: &session_cookie::SessionClaims,
) -> Result<SessionView, ApiError> {
    let (name, team) = tokio::try_join!(
        tokens::token_name(&state.pool, auth.team_id, auth.token_id),
        teams::get_team(&state.pool, auth.team_id),
    )?;
    let (team_slug, team_name) = team.map(|t| (t.slug, t.name)).unwrap_or_default();
    Ok(SessionView {
        token_id: auth.token_id,
        name: name.unwrap_or_default(),
        team_id: auth.team_id,
        team_slug,
        team_name,
        project_id: auth.project_id,
        scopes: auth.scopes.iter().map(|s| s.as_str().to_string()).collect(),
        session_expires_at_epoch: claims.exp * 1000,
        csrf: SessionKeys::derive(&state.signer).csrf(claims),
    })
}

/// `POST /dashboard/session`: the token is checked exactly as a bearer token
/// is; the cookie names the token's id and lasts the configured session
/// time, never past the token's own expiry.
pub async fn sign_in(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    if !same_origin(request.headers()) {
        return Err(ApiError::forbidden(
            "csrf_failed",
            "sign-in from another origin is refused",
        ));
    }
    let secure = settings::secure_cookie(&state.config.public_url, request.headers());
    let (token, form) = read_token(request, &state).await?;
    let token = token.trim();
    if token.is_empty() {
        return Err(ApiError::bad_request("invalid_sign_in", "the token is empty"));
    }
    let auth = authenticate(&state, token).await?;
    let now = chrono::Utc::now().timestamp();
    let mut expires = now + settings::session_seconds();
    if let Some(at) = auth.expires_at {
        expires = expires.min(at.timestamp());
    }
    let (value, claims) = SessionKeys::derive(&state.signer).issue(auth.token_id, expires);
    let cookie = session_cookie::set_cookie(&value, expires - now, secure);
    let mut response = if form {
        Redirect::to("/").into_response()
    } else {
        (StatusCode::OK, AxumJson(view(&state, &auth, &claims).await?)).into_response()
    };
    response.headers_mut().insert(
        header::SET_COOKIE,
        cookie.parse().map_err(|_| ApiError::internal())?,
    );
    Ok(response)
}

/// `GET /dashboard/session`: who the cookie session is, and its CSRF value.
pub async fn current(
    State(state): State<AppState>,
    headers: HeaderMap,
    auth: Option<Auth>,
) -> Result<Response, ApiError> {
    let claims = session_cookie::from_headers(&headers)
        .and_then(|value| SessionKeys::derive(&state.signer).verify(value));
    let (Some(auth), Some(claims)) = (auth, claims) else {
        return Err(ApiError::unauthorized("no dashboard session: sign in"));
    };
    if auth.token_id != claims.tid {
        return Err(ApiError::unauthorized("no dashboard session: sign in"));
    }
    Ok(AxumJson(view(&state, &auth, &claims).await?).into_response())
}

/// `DELETE /dashboard/session`: the browser forgets the cookie.
pub async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let secure = settings::secure_cookie(&state.config.public_url, &headers);
    (
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, session_cookie::clear_cookie(secure))],
    )
        .into_response()
}
