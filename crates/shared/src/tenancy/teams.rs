//! Teams: the top tenant.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

#[derive(Clone, Debug, FromRow)]
pub struct Team {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

pub async fn create_team(db: impl PgExecutor<'_>, slug: &str, name: &str) -> sqlx::Result<Team> {
    sqlx::query_as(
        "INSERT INTO teams (id, slug, name) VALUES ($1, $2, $3) RETURNING id, slug, name, created_at",
    )
    .bind(Uuid::now_v7())
    .bind(slug)
    .bind(name)
    .fetch_one(db)
    .await
}

pub async fn list_teams(db: impl PgExecutor<'_>, only: Option<Uuid>) -> sqlx::Result<Vec<Team>> {
    sqlx::query_as(
        "SELECT id, slug, name, created_at FROM teams WHERE ($1::uuid IS NULL OR id = $1) ORDER BY created_at",
    )
    .bind(only)
    .fetch_all(db)
    .await
}

pub async fn get_team(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<Option<Team>> {
    sqlx::query_as("SELECT id, slug, name, created_at FROM teams WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

#[tracing::instrument(skip(db), err)]
pub async fn get_team_by_slug(db: impl PgExecutor<'_>, slug: &str) -> sqlx::Result<Option<Team>> {
    sqlx::query_as("SELECT id, slug, name, created_at FROM teams WHERE slug = $1")
        .bind(slug)
        .fetch_optional(db)
        .await
}
