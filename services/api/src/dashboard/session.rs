//! `/dashboard/session`: sign in with a token (JSON `{"token"}` or a form
//! field `token`) for a cookie session, ask who the session is and its CSRF
//! value, sign out.

use axum::{
    Form, Json as AxumJson,
    extract::{FromRequest, Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use cairn_shared::{
    auth::Scope,
    tenancy::{TokenKind, teams, tokens},
};
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
    /// The signed-in member; none for a service token's session.
    member_id: Option<Uuid>,
    scopes: Vec<String>,
    /// When the session ends (epoch milliseconds).
    session_expires_at_epoch: i64,
    /// The value unsafe requests must send as `X-Cairn-Csrf`.
    csrf: String,
}

/// The origins this server answers at: the configured public URL's, and the
/// request's `Host` over the scheme it came (`X-Forwarded-Proto` behind a
/// proxy), so `https://host` is not taken for `http://host`.
fn own_origins(public_url: &str, headers: &HeaderMap) -> Vec<String> {
    let mut origins = vec![];
    if let Some(origin) = origin_of(public_url) {
        origins.push(origin);
    }
    if let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) {
        let https = headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
        origins.push(format!(
            "{}://{}",
            if https { "https" } else { "http" },
            host.to_ascii_lowercase()
        ));
    }
    origins
}

/// `scheme://host[:port]` of a URL, lowercased; `None` for anything else
/// (`null`, a relative reference).
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!scheme.is_empty() && !authority.is_empty() && !authority.contains('@')).then(|| {
        format!(
            "{}://{}",
            scheme.to_ascii_lowercase(),
            authority.to_ascii_lowercase()
        )
    })
}

/// A sign-in must come from this server's own page (login CSRF): its
/// `Origin`, or without one its `Referer`, must be one of `own_origins`
/// (scheme, host and port). A form post carrying neither is refused; a JSON
/// body without either is a script's (`curl`), which no foreign page can
/// send without `Origin`.
fn same_origin(public_url: &str, headers: &HeaderMap, form: bool) -> bool {
    let presented = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .map(|v| v.to_str().ok().and_then(origin_of));
    match presented {
        Some(Some(origin)) => own_origins(public_url, headers).contains(&origin),
        Some(None) => false,
        None => !form,
    }
}

fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        })
}

async fn read_token(request: Request, state: &AppState) -> Result<(String, bool), ApiError> {
    let bad = |_| {
        ApiError::bad_request(
            "invalid_sign_in",
            "send a JSON body {\"token\": \"…\"} or a form field `token`",
        )
    };
    if is_form(request.headers()) {
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
        member_id: auth.member_id,
        scopes: auth.scopes.iter().map(|s| s.as_str().to_string()).collect(),
        session_expires_at_epoch: claims.exp * 1000,
        csrf: SessionKeys::derive(&state.signer).csrf(claims),
    })
}

/// `POST /dashboard/session`: the token is checked exactly as a bearer token
/// is, then a session token (kind `session`, the presented token's team,
/// project, scopes and member) is minted for the browser: the cookie names
/// it, it lasts the configured session time (never past the presented
/// token's expiry), signing out revokes it, and revoking the presented token
/// revokes it too.
pub async fn sign_in(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    if !same_origin(
        &state.config.public_url,
        request.headers(),
        is_form(request.headers()),
    ) {
        return Err(ApiError::forbidden(
            "csrf_failed",
            "sign-in is accepted only from this server's own page (Origin or Referer)",
        ));
    }
    let secure = settings::secure_cookie(&state.config.public_url, request.headers());
    let (token, form) = read_token(request, &state).await?;
    let token = token.trim();
    if token.is_empty() {
        return Err(ApiError::bad_request("invalid_sign_in", "the token is empty"));
    }
    let presented = authenticate(&state, token).await?;
    let mut expires = chrono::Utc::now() + chrono::Duration::seconds(settings::session_seconds());
    if let Some(at) = presented.expires_at {
        expires = expires.min(at);
    }
    let name = tokens::token_name(&state.pool, presented.team_id, presented.token_id)
        .await?
        .unwrap_or_else(|| "dashboard".into());
    let session = NewSession {
        team_id: presented.team_id,
        project_id: presented.project_id,
        scopes: presented.scopes.clone(),
        member_id: presented.member_id,
        created_by: Some(presented.token_id),
        name,
        expires,
    };
    open(&state, session, secure, form.then_some("/")).await
}

/// A dashboard session to open: whose, with which scopes, until when.
pub struct NewSession {
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
    pub scopes: Vec<Scope>,
    pub member_id: Option<Uuid>,
    /// The token signed in with (revoking it ends the session); none for single sign-on.
    pub created_by: Option<Uuid>,
    pub name: String,
    pub expires: chrono::DateTime<chrono::Utc>,
}

/// Mints the session token of a dashboard sign-in (by token, or by the
/// company's provider for a member) and answers with its cookie: a
/// redirect to `redirect` when given, else the session as JSON.
pub async fn open(
    state: &AppState,
    new: NewSession,
    secure: bool,
    redirect: Option<&str>,
) -> Result<Response, ApiError> {
    let session = tokens::mint_token(
        &state.pool,
        &state.signer,
        tokens::NewToken {
            team_id: new.team_id,
            project_id: new.project_id,
            name: new.name,
            scopes: new.scopes,
            expires_at: Some(new.expires),
            created_by: new.created_by,
            member_id: new.member_id,
            kind: TokenKind::Session,
            host: None,
        },
    )
    .await?
    .token;
    let now = chrono::Utc::now().timestamp();
    let expires = new.expires.timestamp();
    let (value, claims) = SessionKeys::derive(&state.signer).issue(session.id, expires);
    let cookie = session_cookie::set_cookie(&value, expires - now, secure);
    let mut response = match redirect {
        Some(to) => Redirect::to(to).into_response(),
        None => {
            let auth = Auth::from_token(&session);
            (StatusCode::OK, AxumJson(view(state, &auth, &claims).await?)).into_response()
        }
    };
    response.headers_mut().append(
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

/// `DELETE /dashboard/session`: ends the session on the server (its token is
/// revoked, on this replica at once, on others within the token cache's
/// time) and in the browser.
pub async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let secure = settings::secure_cookie(&state.config.public_url, &headers);
    let claims = session_cookie::from_headers(&headers)
        .and_then(|value| SessionKeys::derive(&state.signer).verify(value));
    if let Some(claims) = claims
        && let Some(row) = tokens::load_for_auth(&state.pool, claims.tid).await?
        && row.token.kind == TokenKind::Session
    {
        tokens::revoke_token(&state.pool, row.token.team_id, row.token.id).await?;
        state.tokens.forget(row.token.id);
    }
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, session_cookie::clear_cookie(secure))],
    )
        .into_response())
}
