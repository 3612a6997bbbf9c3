//! Single sign-on for the dashboard (and for `cairn login`, which signs in
//! through it): OpenID Connect, authorization code with PKCE, against any
//! standard provider found by discovery from its issuer URL.
//!
//! `GET /auth/oidc/login?next=/path` sends the browser to the provider with
//! a fresh state, nonce and PKCE verifier, kept in a signed ten-minute
//! cookie (`cairn_oidc`); `GET /auth/oidc/callback` checks the state,
//! exchanges the code, verifies the ID token, maps the identity to a team
//! and role (`config::Rule`), finds or creates the member and opens a
//! dashboard session for them. `GET /auth/oidc` says whether it is on.

pub mod config;
mod provider;

use axum::{
    Json, Router,
    extract::{Query, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
    routing::get,
};
use cairn_shared::{
    auth::Scope,
    tenancy::{
        Role,
        audit::{self, AuditEntry},
        members, teams,
    },
};
use serde::Deserialize;

use provider::Pending;
pub use provider::Provider;

use super::session_cookie::{self, SessionKeys};
use crate::{
    dashboard::{
        session::{NewSession, open},
        settings,
    },
    error::ApiError,
    state::AppState,
};

const PENDING_COOKIE: &str = "cairn_oidc";
const PENDING_AUDIENCE: &str = "cairn-oidc-login";
const PENDING_SECONDS: i64 = 600;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/oidc", get(status))
        .route("/auth/oidc/login", get(login))
        .route("/auth/oidc/callback", get(callback))
}

/// The scopes a member's dashboard session and laptop tokens carry.
pub fn scopes_of(role: Role) -> Vec<Scope> {
    match role {
        Role::Member => vec![Scope::Ingest, Scope::Read],
        Role::Admin => vec![Scope::Admin, Scope::Read, Scope::Ingest],
    }
}

fn provider(state: &AppState) -> Result<&Provider, ApiError> {
    state.oidc.as_ref().ok_or_else(|| {
        ApiError::not_found(
            "sso_not_configured",
            "single sign-on is not configured on this server (CAIRN_OIDC_ISSUER): sign in with a token",
        )
    })
}

/// `GET /auth/oidc`: whether single sign-on is on (the sign-in page asks).
async fn status(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "enabled": state.oidc.is_some(),
        "loginUrl": "/auth/oidc/login",
    }))
}

#[derive(Deserialize)]
struct LoginQuery {
    next: Option<String>,
}

/// A path on this server to land on after sign-in; anything else lands on `/`.
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(p) if p.starts_with('/') && !p.starts_with("//") && !p.contains('\\') => p.to_string(),
        _ => "/".into(),
    }
}

/// Where the provider sends the browser back: `CAIRN_OIDC_REDIRECT_URL`,
/// else under `CAIRN_PUBLIC_URL` when set, else under the address the
/// browser used (the provider checks it against the client's registered URLs).
fn redirect_uri(state: &AppState, provider: &Provider, headers: &HeaderMap) -> String {
    if let Some(url) = &provider.config.redirect_url {
        return url.clone();
    }
    let secure = settings::secure_cookie(&state.config.public_url, headers);
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) if !state.config.public_url_set => {
            format!(
                "{}://{host}/auth/oidc/callback",
                if secure { "https" } else { "http" }
            )
        }
        _ => format!(
            "{}/auth/oidc/callback",
            state.config.public_url.trim_end_matches('/')
        ),
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct PendingLogin {
    #[serde(flatten)]
    pending: Pending,
    next: String,
}

fn pending_cookie(value: &str, max_age: i64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    // Lax: the provider's redirect back is a top-level navigation from its site.
    format!("{PENDING_COOKIE}={value}; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
}

/// `GET /auth/oidc/login`: off to the provider.
async fn login(
    State(state): State<AppState>,
    Query(q): Query<LoginQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let provider = provider(&state)?;
    let (url, pending) = provider.begin(&redirect_uri(&state, provider, &headers)).await?;
    let sealed = SessionKeys::derive(&state.signer).seal(
        PENDING_AUDIENCE,
        PENDING_SECONDS,
        PendingLogin {
            pending,
            next: local_path(q.next.as_deref()),
        },
    );
    let secure = settings::secure_cookie(&state.config.public_url, &headers);
    Ok((
        [(
            header::SET_COOKIE,
            pending_cookie(&sealed, PENDING_SECONDS, secure),
        )],
        Redirect::to(&url),
    )
        .into_response())
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /auth/oidc/callback`: the provider's answer.
async fn callback(
    State(state): State<AppState>,
    Query(q): Query<CallbackQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let provider = provider(&state)?;
    let login: PendingLogin = session_cookie::cookie(&headers, PENDING_COOKIE)
        .and_then(|v| SessionKeys::derive(&state.signer).open(PENDING_AUDIENCE, v))
        .ok_or_else(|| {
            ApiError::forbidden(
                "sso_state_mismatch",
                "this sign-in was not started here, or took over ten minutes: start again",
            )
        })?;
    let same_state = q.state.as_deref().is_some_and(|s| {
        use subtle::ConstantTimeEq as _;
        s.as_bytes().ct_eq(login.pending.state.as_bytes()).into()
    });
    if !same_state {
        return Err(ApiError::forbidden(
            "sso_state_mismatch",
            "the provider's answer does not belong to this sign-in: start again",
        ));
    }
    if let Some(error) = q.error {
        return Err(ApiError::forbidden(
            "sso_refused",
            format!(
                "the identity provider refused the sign-in: {error} {}",
                q.error_description.unwrap_or_default()
            ),
        ));
    }
    let code = q
        .code
        .ok_or_else(|| ApiError::bad_request("sso_no_code", "the provider's answer holds no code"))?;
    let (identity, claims) = provider.finish(code, &login.pending).await?;
    let Some((team_slug, role)) = provider.config.admit(&claims) else {
        tracing::info!(subject = %identity.subject, email = ?identity.email, "single sign-on: identity not admitted");
        return Err(ApiError::forbidden(
            "identity_not_allowed",
            "this identity may not enter any team on this server (email domain or groups)",
        ));
    };
    let team = teams::get_team_by_slug(&state.pool, team_slug)
        .await?
        .ok_or_else(|| {
            tracing::error!(
                team = team_slug,
                "single sign-on: the configured team does not exist"
            );
            ApiError::forbidden("team_not_found", "the team single sign-on maps to does not exist")
        })?;
    let mut tx = state.pool.begin().await?;
    let member = members::sign_in(&mut tx, team.id, &identity, role).await?;
    if member.offboarded_at.is_some() {
        return Err(ApiError::forbidden(
            "member_offboarded",
            "this member was offboarded: ask an admin to restore access",
        ));
    }
    audit::record(
        &mut *tx,
        AuditEntry {
            team_id: Some(team.id),
            project_id: None,
            actor_token_id: None,
            action: "member.sign_in",
            target_type: "member",
            target_id: Some(member.id.to_string()),
            detail: serde_json::json!({"email": member.email, "role": member.role.as_str(), "via": "oidc"}),
            request_id: None,
        },
    )
    .await?;
    tx.commit().await?;
    let secure = settings::secure_cookie(&state.config.public_url, &headers);
    let session = NewSession {
        team_id: team.id,
        project_id: None,
        scopes: scopes_of(member.role),
        member_id: Some(member.id),
        created_by: None,
        name: format!("dashboard: {}", member.display()),
        expires: chrono::Utc::now() + chrono::Duration::seconds(settings::session_seconds()),
    };
    let mut response = open(&state, session, secure, Some(&login.next)).await?;
    *response.status_mut() = StatusCode::SEE_OTHER;
    response.headers_mut().append(
        header::SET_COOKIE,
        pending_cookie("", 0, secure)
            .parse()
            .map_err(|_| ApiError::internal())?,
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_local_paths_are_landed_on() {
        assert_eq!(super::local_path(Some("/auth/cli/abc")), "/auth/cli/abc");
        for bad in ["https://evil.test", "//evil.test/x", "/\\evil.test", "evil"] {
            assert_eq!(super::local_path(Some(bad)), "/", "{bad}");
        }
        assert_eq!(super::local_path(None), "/");
    }
}
