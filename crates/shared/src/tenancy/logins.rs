//! `cairn login` requests (migration 0026): opened by a laptop, approved by
//! a signed-in member, collected once by the laptop with its poll secret.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, prelude::FromRow};
use uuid::Uuid;

#[derive(Clone, Debug, FromRow)]
pub struct Login {
    pub id: Uuid,
    pub user_code: String,
    pub host: String,
    pub team_id: Option<Uuid>,
    pub member_id: Option<Uuid>,
    pub approved_at: Option<DateTime<Utc>>,
    pub token_id: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, user_code, host, team_id, member_id, approved_at, token_id, expires_at";

/// Opens a request that lives `seconds`; expired ones are swept on the way.
#[tracing::instrument(skip(conn, poll_hash), err)]
pub async fn open(
    conn: &mut PgConnection,
    poll_hash: &[u8],
    user_code: &str,
    host: &str,
    seconds: i64,
) -> sqlx::Result<Login> {
    sqlx::query("DELETE FROM cli_logins WHERE expires_at < now() - interval '1 day'")
        .execute(&mut *conn)
        .await?;
    let sql = format!(
        "INSERT INTO cli_logins (id, poll_hash, user_code, host, expires_at)
         VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second') RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::new_v4())
        .bind(poll_hash)
        .bind(user_code)
        .bind(host)
        .bind(seconds)
        .fetch_one(conn)
        .await
}

/// An unexpired request.
#[tracing::instrument(skip(db), err)]
pub async fn get(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<Option<Login>> {
    let sql = format!("SELECT {COLUMNS} FROM cli_logins WHERE id = $1 AND expires_at > now()");
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(db)
        .await
}

/// A member approves an unexpired request nobody approved yet.
#[tracing::instrument(skip(db), err)]
pub async fn approve(
    db: impl PgExecutor<'_>,
    id: Uuid,
    team_id: Uuid,
    member_id: Uuid,
) -> sqlx::Result<Option<Login>> {
    let sql = format!(
        "UPDATE cli_logins SET team_id = $2, member_id = $3, approved_at = now()
         WHERE id = $1 AND approved_at IS NULL AND expires_at > now() RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(team_id)
        .bind(member_id)
        .fetch_optional(db)
        .await
}

/// The request its poll secret names, locked for collection.
#[tracing::instrument(skip(conn, poll_hash), err)]
pub async fn for_poll(conn: &mut PgConnection, id: Uuid, poll_hash: &[u8]) -> sqlx::Result<Option<Login>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM cli_logins WHERE id = $1 AND poll_hash = $2 AND expires_at > now() FOR UPDATE"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(poll_hash)
        .fetch_optional(conn)
        .await
}

/// Marks the request collected with the token minted for it.
#[tracing::instrument(skip(db), err)]
pub async fn collected(db: impl PgExecutor<'_>, id: Uuid, token_id: Uuid) -> sqlx::Result<()> {
    sqlx::query("UPDATE cli_logins SET token_id = $2 WHERE id = $1")
        .bind(id)
        .bind(token_id)
        .execute(db)
        .await
        .map(drop)
}
