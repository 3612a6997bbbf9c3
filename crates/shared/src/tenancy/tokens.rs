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
}

pub struct MintedToken {
    pub token: ApiToken,
    /// The JWT; shown once, never stored.
    pub secret: String,
}

macro_rules! token_columns {
    () => {
        "id, team_id, project_id, name, scopes, expires_at, revoked_at, last_used_at, created_at"
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
    let token = sqlx::query_as(concat!("INSERT INTO api_tokens (id, team_id, project_id, name, scopes, secret_salt, secret_hash, expires_at, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ", token_columns!(), ""))
    .bind(id)
    .bind(new.team_id)
    .bind(new.project_id)
    .bind(&new.name)
    .bind(&scope_names)
    .bind(&hashed.salt)
    .bind(&hashed.hash)
    .bind(new.expires_at)
    .bind(new.created_by)
    .fetch_one(db)
    .await?;
    Ok(MintedToken { token, secret })
}

pub async fn list_tokens(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<Vec<ApiToken>> {
    sqlx::query_as(concat!(
        "SELECT ",
        token_columns!(),
        " FROM api_tokens WHERE team_id = $1 ORDER BY created_at DESC"
    ))
    .bind(team_id)
    .fetch_all(db)
    .await
}

/// Revokes a token of the team; `None` when no such token exists in the team.
pub async fn revoke_token(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    id: Uuid,
) -> sqlx::Result<Option<ApiToken>> {
    sqlx::query_as(concat!(
        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
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
