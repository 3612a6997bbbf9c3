//! API token rows: minting (the secret is returned once and stored only as a
//! salted hash), listing, revocation, and the lookup behind authentication.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

use crate::auth::{Scope, SecretHash, TokenSigner};

#[derive(Clone, Debug, FromRow)]
pub struct ApiToken {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
    pub name: String,
    pub scopes: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// The member it belongs to (`laptop` and `session` tokens of a person).
    pub member_id: Option<Uuid>,
    pub kind: TokenKind,
    /// The machine a laptop token was minted for.
    pub host: Option<String>,
    /// The token that minted it (for a dashboard session: the one signed in with).
    pub created_by: Option<Uuid>,
}

/// Whose a token is (migration 0025).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::Type, serde::Serialize, serde::Deserialize)]
#[sqlx(type_name = "text", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    /// CI, integrations, the bootstrap token: no person.
    #[default]
    Service,
    /// One machine of a member, minted by `cairn login`.
    Laptop,
    /// A dashboard sign-in; signing out revokes it.
    Session,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::Laptop => "laptop",
            Self::Session => "session",
        }
    }
}

impl ApiToken {
    pub fn scopes(&self) -> Vec<Scope> {
        self.scopes.iter().filter_map(|s| Scope::parse(s).ok()).collect()
    }

    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }
}

pub struct NewToken {
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_by: Option<Uuid>,
    pub member_id: Option<Uuid>,
    pub kind: TokenKind,
    pub host: Option<String>,
}

impl NewToken {
    /// A service token (no member) of the team, or of one project.
    pub fn service(
        team_id: Uuid,
        project_id: Option<Uuid>,
        name: impl Into<String>,
        scopes: Vec<Scope>,
    ) -> Self {
        Self {
            team_id,
            project_id,
            name: name.into(),
            scopes,
            expires_at: None,
            created_by: None,
            member_id: None,
            kind: TokenKind::Service,
            host: None,
        }
    }
}

pub struct MintedToken {
    pub token: ApiToken,
    /// The JWT; shown once, never stored.
    pub secret: String,
}

macro_rules! token_columns {
    () => {
        "id, team_id, project_id, name, scopes, expires_at, revoked_at, last_used_at, created_at, member_id, kind,
         host, created_by"
    };
}

pub async fn mint_token(
    db: impl PgExecutor<'_>,
    signer: &TokenSigner,
    new: NewToken,
) -> sqlx::Result<MintedToken> {
    let id = Uuid::now_v7();
    let mut scopes = new.scopes;
    scopes.sort();
    scopes.dedup();
    let claims = TokenSigner::claims(
        id,
        new.team_id,
        new.project_id,
        scopes.clone(),
        new.expires_at.map(|e| e.timestamp()),
    );
    let secret = signer.sign(&claims);
    let hashed = SecretHash::new(&secret);
    let scope_names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    let token = sqlx::query_as(concat!("INSERT INTO api_tokens (id, team_id, project_id, name, scopes, secret_salt, secret_hash, expires_at, created_by,
                                 member_id, kind, host)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ", token_columns!(), ""))
    .bind(id)
    .bind(new.team_id)
    .bind(new.project_id)
    .bind(&new.name)
    .bind(&scope_names)
    .bind(&hashed.salt)
    .bind(&hashed.hash)
    .bind(new.expires_at)
    .bind(new.created_by)
    .bind(new.member_id)
    .bind(new.kind)
    .bind(&new.host)
    .fetch_one(db)
    .await?;
    Ok(MintedToken { token, secret })
}

/// The team's tokens, newest first; dashboard sessions are not listed.
pub async fn list_tokens(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<Vec<ApiToken>> {
    sqlx::query_as(concat!(
        "SELECT ",
        token_columns!(),
        " FROM api_tokens WHERE team_id = $1 AND kind <> 'session' ORDER BY created_at DESC"
    ))
    .bind(team_id)
    .fetch_all(db)
    .await
}

/// Revokes a token of the team, and the dashboard sessions opened with it;
/// `None` when no such token exists in the team.
#[tracing::instrument(skip(db), err)]
pub async fn revoke_token(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    id: Uuid,
) -> sqlx::Result<Option<ApiToken>> {
    sqlx::query_as(concat!(
        "WITH sessions AS (
             UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
             WHERE team_id = $1 AND created_by = $2 AND kind = 'session')
         UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
         WHERE team_id = $1 AND id = $2 RETURNING ",
        token_columns!(),
        ""
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(db)
    .await
}

/// What authentication needs of a row: the token and its stored hash.
#[derive(FromRow)]
pub struct TokenForAuth {
    #[sqlx(flatten)]
    pub token: ApiToken,
    pub secret_salt: Vec<u8>,
    pub secret_hash: Vec<u8>,
}

pub async fn load_for_auth(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<Option<TokenForAuth>> {
    sqlx::query_as(concat!(
        "SELECT ",
        token_columns!(),
        ", secret_salt, secret_hash FROM api_tokens WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(db)
    .await
}

/// A token's name (what `/v1/whoami` and `cairn doctor` show).
#[tracing::instrument(skip(db), err)]
pub async fn token_name(db: impl PgExecutor<'_>, team_id: Uuid, id: Uuid) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT name FROM api_tokens WHERE team_id = $1 AND id = $2")
        .bind(team_id)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// Records use, at most once a minute per token so reads stay cheap.
pub async fn touch_last_used(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE api_tokens SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
    )
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

/// The dashboard sessions opened with a token (to drop from caches when it
/// is revoked).
#[tracing::instrument(skip(db), err)]
pub async fn sessions_of(db: impl PgExecutor<'_>, team_id: Uuid, token_id: Uuid) -> sqlx::Result<Vec<Uuid>> {
    sqlx::query_scalar(
        "SELECT id FROM api_tokens WHERE team_id = $1 AND created_by = $2 AND kind = 'session'",
    )
    .bind(team_id)
    .bind(token_id)
    .fetch_all(db)
    .await
}

/// Revokes every token of a member (offboarding); returns their ids.
#[tracing::instrument(skip(db), err)]
pub async fn revoke_member_tokens(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    member_id: Uuid,
) -> sqlx::Result<Vec<Uuid>> {
    sqlx::query_scalar(
        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
         WHERE team_id = $1 AND member_id = $2 RETURNING id",
    )
    .bind(team_id)
    .bind(member_id)
    .fetch_all(db)
    .await
}

/// The tokens of one member, newest first.
#[tracing::instrument(skip(db), err)]
pub async fn member_tokens(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    member_id: Uuid,
) -> sqlx::Result<Vec<ApiToken>> {
    sqlx::query_as(concat!(
        "SELECT ",
        token_columns!(),
        " FROM api_tokens WHERE team_id = $1 AND member_id = $2 ORDER BY created_at DESC"
    ))
    .bind(team_id)
    .bind(member_id)
    .fetch_all(db)
    .await
}
