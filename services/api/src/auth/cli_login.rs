//! `cairn login`: a laptop gets a token of its own without anyone copying
//! one by hand, in the shape of the OAuth device flow.
//!
//! 1. `POST /auth/cli/start {host}`: the laptop gets a login id, a code to
//!    show, and a poll secret (kept only as a hash here).
//! 2. The person opens `/#/cli/<id>` on the dashboard, signs in with the
//!    company's provider, checks that the code is the one their terminal
//!    shows and approves (`POST /auth/cli/<id>/approve`, a member's cookie
//!    session with its CSRF header).
//! 3. `POST /auth/cli/poll {loginId, pollSecret}`: pending (202) until
//!    approved; then, once, a laptop token for that member (ingest + read
//!    on the team's projects, named after the host) is minted and answered.
//!
//! `cairn logout` revokes its token with `DELETE /v1/whoami`.

use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use cairn_shared::{
    auth::Scope,
    tenancy::{TokenKind, logins, members, tokens},
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::Auth;
use crate::{error::ApiError, routes::admin, state::AppState};

/// How long a login request waits for approval and collection.
const LOGIN_SECONDS: i64 = 600;
/// Letters that cannot be mistaken for one another, for the code shown.
const CODE_ALPHABET: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/cli/start", post(start))
        .route("/auth/cli/poll", post(poll))
        .route("/auth/cli/{id}", get(show))
        .route("/auth/cli/{id}/approve", post(approve))
}

#[derive(Deserialize)]
struct Start {
    host: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    login_id: Uuid,
    user_code: String,
    /// Open this under the server's URL to approve.
    verify_path: String,
    poll_secret: String,
    interval_seconds: u64,
    expires_in_seconds: i64,
}

fn digest(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

fn user_code() -> String {
    let random = Uuid::new_v4();
    let letters: String = random.as_bytes()[..8]
        .iter()
        .map(|b| CODE_ALPHABET[*b as usize % CODE_ALPHABET.len()] as char)
        .collect();
    format!("{}-{}", &letters[..4], &letters[4..])
}

fn not_found() -> ApiError {
    ApiError::not_found(
        "login_not_found",
        "no such login request, or it expired (ten minutes): run `cairn login` again",
    )
}

/// `POST /auth/cli/start`.
async fn start(State(state): State<AppState>, Json(body): Json<Start>) -> Result<Response, ApiError> {
    let host = body.host.trim();
    if host.is_empty() || host.len() > 200 || host.chars().any(char::is_control) {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`host` must be 1 to 200 printable characters",
        ));
    }
    let secret = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
    let code = user_code();
    let mut conn = state.pool.acquire().await?;
    let login = logins::open(&mut conn, &digest(&secret), &code, host, LOGIN_SECONDS).await?;
    Ok((
        StatusCode::CREATED,
        Json(Started {
            login_id: login.id,
            user_code: code,
            verify_path: format!("/#/cli/{}", login.id),
            poll_secret: secret,
            interval_seconds: 1,
            expires_in_seconds: LOGIN_SECONDS,
        }),
    )
        .into_response())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown {
    host: String,
    user_code: String,
    approved: bool,
}

/// A member's dashboard session: who approves.
fn member_of(auth: &Auth) -> Result<Uuid, ApiError> {
    if auth.kind != TokenKind::Session {
        return Err(ApiError::forbidden(
            "sign_in_required",
            "approve a laptop from the dashboard, signed in with your company account",
        ));
    }
    auth.member_id.ok_or_else(|| {
        ApiError::forbidden(
            "member_required",
            "a laptop token belongs to a person: sign in with your company account, not a token",
        )
    })
}

/// `GET /auth/cli/{id}`: what the approval page shows.
async fn show(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> Result<Json<Shown>, ApiError> {
    member_of(&auth)?;
    let login = logins::get(&state.pool, id).await?.ok_or_else(not_found)?;
    Ok(Json(Shown {
        host: login.host,
        user_code: login.user_code,
        approved: login.approved_at.is_some(),
    }))
}

/// `POST /auth/cli/{id}/approve`.
async fn approve(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> Result<Json<Shown>, ApiError> {
    let member = member_of(&auth)?;
    let login = logins::approve(&state.pool, id, auth.team_id, member)
        .await?
        .ok_or_else(|| {
            ApiError::conflict(
                "login_not_pending",
                "this login request was already approved, or it expired: run `cairn login` again",
            )
        })?;
    Ok(Json(Shown {
        host: login.host,
        user_code: login.user_code,
        approved: true,
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Poll {
    login_id: Uuid,
    poll_secret: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Collected {
    token: String,
    token_id: Uuid,
    team_id: Uuid,
    name: String,
    member: crate::routes::whoami::MemberRef,
}

/// `POST /auth/cli/poll`: 202 while pending; the token once approved.
async fn poll(State(state): State<AppState>, Json(body): Json<Poll>) -> Result<Response, ApiError> {
    let mut tx = state.pool.begin().await?;
    let login = logins::for_poll(&mut tx, body.login_id, &digest(&body.poll_secret))
        .await?
        .ok_or_else(not_found)?;
    let (Some(team_id), Some(member_id)) = (login.team_id, login.member_id) else {
        return Ok((
            StatusCode::ACCEPTED,
            Json(serde_json::json!({"status": "pending"})),
        )
            .into_response());
    };
    if login.token_id.is_some() {
        return Err(ApiError::new(
            StatusCode::GONE,
            "login_collected",
            "this login's token was already collected: run `cairn login` again",
        ));
    }
    let member = members::get(&mut *tx, team_id, member_id)
        .await?
        .filter(|m| m.offboarded_at.is_none())
        .ok_or_else(|| ApiError::forbidden("member_offboarded", "this member was offboarded"))?;
    let minted = tokens::mint_token(
        &mut *tx,
        &state.signer,
        tokens::NewToken {
            team_id,
            project_id: None,
            name: format!("laptop: {}", login.host),
            scopes: super::oidc::scopes_of(member.role)
                .into_iter()
                .filter(|s| matches!(s, Scope::Ingest | Scope::Read))
                .collect(),
            expires_at: None,
            created_by: None,
            member_id: Some(member.id),
            kind: TokenKind::Laptop,
            host: Some(login.host.clone()),
        },
    )
    .await?;
    logins::collected(&mut *tx, login.id, minted.token.id).await?;
    let audit_as = Auth::from_token(&minted.token);
    admin::record(
        &mut *tx,
        &audit_as,
        admin::Target {
            team_id,
            project_id: None,
            kind: "api_token",
            id: minted.token.id,
        },
        "token.mint",
        serde_json::json!({"via": "cairn login", "host": login.host, "member": member.id}),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(Collected {
        token: minted.secret,
        token_id: minted.token.id,
        team_id,
        name: minted.token.name,
        member: member.into(),
    })
    .into_response())
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_are_two_groups_of_four_unambiguous_letters() {
        for _ in 0..100 {
            let code = super::user_code();
            assert_eq!(code.len(), 9);
            assert_eq!(&code[4..5], "-");
            assert!(
                code.replace('-', "")
                    .bytes()
                    .all(|b| super::CODE_ALPHABET.contains(&b))
            );
        }
    }
}
