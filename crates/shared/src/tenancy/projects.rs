//! Projects: a team's repositories; everything agents post lives in one.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

#[derive(Clone, Debug, FromRow)]
pub struct Project {
    pub id: Uuid,
    pub team_id: Uuid,
    pub slug: String,
    pub name: String,
    pub settings: serde_json::Value,
    pub context_budget_tokens: i32,
    pub prompt_context: bool,
    pub prompt_context_budget_tokens: i32,
    /// PreToolUse answers with memories about the tool's file (migration 0015).
    pub file_memories: bool,
    /// Observations older than this many days and not retrieved since are
    /// archived; `None`: kept for ever (migration 0017).
    pub retention_days: Option<i32>,
    pub created_at: DateTime<Utc>,
    /// `team`, or `private-first`: memory private to its author until
    /// promoted (migration 0027).
    pub memory_visibility: String,
    /// In a private-first project, kinds promoted to the team at once.
    pub promote_kinds: Vec<String>,
    /// In a private-first project, a private memory nobody rejected is
    /// promoted after this many days; `None`: only by hand.
    pub promote_after_days: Option<i32>,
    /// Raw events are dropped this many days after arrival once digested;
    /// `None`: the deployment's default, 0: kept for ever (migration 0029).
    pub raw_event_retention_days: Option<i32>,
}

macro_rules! project_columns {
    () => {
        "id, team_id, slug, name, settings, context_budget_tokens, prompt_context, prompt_context_budget_tokens,
         file_memories, retention_days, created_at, memory_visibility, promote_kinds, promote_after_days,
         raw_event_retention_days"
    };
}

pub async fn create_project(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    slug: &str,
    name: &str,
) -> sqlx::Result<Project> {
    sqlx::query_as(concat!(
        "INSERT INTO projects (id, team_id, slug, name) VALUES ($1, $2, $3, $4) RETURNING ",
        project_columns!(),
        ""
    ))
    .bind(Uuid::now_v7())
    .bind(team_id)
    .bind(slug)
    .bind(name)
    .fetch_one(db)
    .await
}

pub async fn list_projects(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<Vec<Project>> {
    sqlx::query_as(concat!(
        "SELECT ",
        project_columns!(),
        " FROM projects WHERE team_id = $1 ORDER BY created_at"
    ))
    .bind(team_id)
    .fetch_all(db)
    .await
}

/// A project of the team, named by id or by slug.
pub async fn find_project(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    id_or_slug: &str,
) -> sqlx::Result<Option<Project>> {
    match Uuid::parse_str(id_or_slug) {
        Ok(id) => {
            sqlx::query_as(concat!(
                "SELECT ",
                project_columns!(),
                " FROM projects WHERE team_id = $1 AND id = $2"
            ))
            .bind(team_id)
            .bind(id)
            .fetch_optional(db)
            .await
        }
        Err(_) => {
            sqlx::query_as(concat!(
                "SELECT ",
                project_columns!(),
                " FROM projects WHERE team_id = $1 AND slug = $2"
            ))
            .bind(team_id)
            .bind(id_or_slug)
            .fetch_optional(db)
            .await
        }
    }
}

/// What memory a project gives back; `None` leaves a setting as it is.
#[derive(Clone, Debug, Default)]
pub struct MemorySettings {
    pub context_budget_tokens: Option<i32>,
    pub prompt_context: Option<bool>,
    pub prompt_context_budget_tokens: Option<i32>,
    pub file_memories: Option<bool>,
    /// `Some(None)` removes the retention policy.
    pub retention_days: Option<Option<i32>>,
    pub memory_visibility: Option<String>,
    pub promote_kinds: Option<Vec<String>>,
    /// `Some(None)` removes the rule.
    pub promote_after_days: Option<Option<i32>>,
    /// `Some(None)`: the deployment's default.
    pub raw_event_retention_days: Option<Option<i32>>,
}

/// Changes a project's memory settings; `None` when the team has no such project.
/// Out-of-range budgets are refused by the schema (23514).
pub async fn update_memory_settings(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
    s: MemorySettings,
) -> sqlx::Result<Option<Project>> {
    sqlx::query_as(concat!(
        "UPDATE projects SET context_budget_tokens = coalesce($3, context_budget_tokens),
             prompt_context = coalesce($4, prompt_context),
             prompt_context_budget_tokens = coalesce($5, prompt_context_budget_tokens),
             file_memories = coalesce($6, file_memories),
             retention_days = CASE WHEN $7 THEN $8 ELSE retention_days END,
             memory_visibility = coalesce($9, memory_visibility),
             promote_kinds = coalesce($10, promote_kinds),
             promote_after_days = CASE WHEN $11 THEN $12 ELSE promote_after_days END,
             raw_event_retention_days = CASE WHEN $13 THEN $14 ELSE raw_event_retention_days END
         WHERE team_id = $1 AND id = $2 RETURNING ",
        project_columns!()
    ))
    .bind(team_id)
    .bind(project_id)
    .bind(s.context_budget_tokens)
    .bind(s.prompt_context)
    .bind(s.prompt_context_budget_tokens)
    .bind(s.file_memories)
    .bind(s.retention_days.is_some())
    .bind(s.retention_days.flatten())
    .bind(s.memory_visibility)
    .bind(s.promote_kinds)
    .bind(s.promote_after_days.is_some())
    .bind(s.promote_after_days.flatten())
    .bind(s.raw_event_retention_days.is_some())
    .bind(s.raw_event_retention_days.flatten())
    .fetch_optional(db)
    .await
}
