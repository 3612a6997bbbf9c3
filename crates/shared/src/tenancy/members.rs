//! Members of a team (migration 0025): one person in one team, found by
//! their identity at the company's provider (issuer + subject) or, for one
//! an admin added before their first sign-in, by email.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

/// What a member may do: `admin` as an admin token does, `member` ingest
/// and read on the team's projects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::Type, serde::Serialize, serde::Deserialize)]
#[sqlx(type_name = "text", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    Member,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Admin => "admin",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "member" => Some(Self::Member),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, FromRow, serde::Serialize)]
pub struct Member {
    pub id: Uuid,
    pub team_id: Uuid,
    pub issuer: Option<String>,
    pub subject: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub offboarded_at: Option<DateTime<Utc>>,
}

impl Member {
    /// How the member is shown: name, else email, else the subject.
    pub fn display(&self) -> String {
        self.name
            .clone()
            .or_else(|| self.email.clone())
            .or_else(|| self.subject.clone())
            .unwrap_or_else(|| self.id.to_string())
    }
}

/// Who signed in, as the provider says.
#[derive(Clone, Debug)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub name: Option<String>,
}

const COLUMNS: &str =
    "id, team_id, issuer, subject, email, name, role, created_at, last_seen_at, offboarded_at";

/// The member this identity is in `team_id`, created on first sign-in (or
/// bound to the one an admin added by the same email); name, email and —
/// when `role` is given, as the configured mapping decides — the role are
/// refreshed. An offboarded member stays offboarded: the caller refuses them.
#[tracing::instrument(skip(db), err)]
pub async fn sign_in(
    db: &mut sqlx::PgConnection,
    team_id: Uuid,
    identity: &Identity,
    role: Role,
) -> sqlx::Result<Member> {
    let existing: Option<Uuid> = sqlx::query_scalar(
        "SELECT id FROM members WHERE team_id = $1
           AND ((issuer = $2 AND subject = $3) OR (subject IS NULL AND lower(email) = lower($4)))
         ORDER BY subject IS NULL LIMIT 1",
    )
    .bind(team_id)
    .bind(&identity.issuer)
    .bind(&identity.subject)
    .bind(&identity.email)
    .fetch_optional(&mut *db)
    .await?;
    let sql = format!(
        "INSERT INTO members AS m (id, team_id, issuer, subject, email, name, role, last_seen_at)
         VALUES (coalesce($1, $8), $2, $3, $4, $5, $6, $7, now())
         ON CONFLICT (id) DO UPDATE SET issuer = EXCLUDED.issuer, subject = EXCLUDED.subject,
             email = coalesce(EXCLUDED.email, m.email), name = coalesce(EXCLUDED.name, m.name),
             role = EXCLUDED.role, last_seen_at = now()
         RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(existing)
        .bind(team_id)
        .bind(&identity.issuer)
        .bind(&identity.subject)
        .bind(&identity.email)
        .bind(&identity.name)
        .bind(role)
        .bind(Uuid::now_v7())
        .fetch_one(db)
        .await
}

/// An admin adds a member before their first sign-in (matched by email then).
#[tracing::instrument(skip(db), err)]
pub async fn add(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    email: &str,
    name: Option<&str>,
    role: Role,
) -> sqlx::Result<Member> {
    let sql = format!(
        "INSERT INTO members (id, team_id, email, name, role) VALUES ($1, $2, $3, $4, $5) RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::now_v7())
        .bind(team_id)
        .bind(email)
        .bind(name)
        .bind(role)
        .fetch_one(db)
        .await
}

#[tracing::instrument(skip(db), err)]
pub async fn get(db: impl PgExecutor<'_>, team_id: Uuid, id: Uuid) -> sqlx::Result<Option<Member>> {
    let sql = format!("SELECT {COLUMNS} FROM members WHERE team_id = $1 AND id = $2");
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(team_id)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// The team's members, by name.
#[tracing::instrument(skip(db), err)]
pub async fn list(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<Vec<Member>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM members WHERE team_id = $1
         ORDER BY offboarded_at IS NOT NULL, lower(coalesce(name, email, subject)), id"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(team_id)
        .fetch_all(db)
        .await
}

/// Marks a member as gone (their tokens are revoked beside it); `None` when
/// the team has no such member.
#[tracing::instrument(skip(db), err)]
pub async fn offboard(db: impl PgExecutor<'_>, team_id: Uuid, id: Uuid) -> sqlx::Result<Option<Member>> {
    let sql = format!(
        "UPDATE members SET offboarded_at = coalesce(offboarded_at, now())
         WHERE team_id = $1 AND id = $2 RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(team_id)
        .bind(id)
        .fetch_optional(db)
        .await
}
