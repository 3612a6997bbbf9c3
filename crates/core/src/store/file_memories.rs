//! The live observations about one file, newest first: what PreToolUse
//! gives the agent before it reads or changes that file.

use crate::tenancy::Viewer;
use sqlx::PgPool;
use uuid::Uuid;

use crate::context::gather::ObservationItem;

/// Whether the project gives file memories at PreToolUse (migration 0015).
#[tracing::instrument(skip(pool))]
pub async fn enabled(pool: &PgPool, project_id: Uuid) -> sqlx::Result<bool> {
    let on: Option<bool> = sqlx::query_scalar("SELECT file_memories FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_optional(pool)
        .await?;
    Ok(on.unwrap_or(false))
}

/// At most `limit` `live` observations of the project whose files read or
/// modified include one of `paths` (the path as the tool gave it, and
/// relative to the session's directory), or whose `file_refs` cite
/// `relative`. Plans are left out: they are about the work, not the file.
/// Both tests are answered by GIN indexes (migrations 0004 and 0014).
#[tracing::instrument(skip(pool))]
pub async fn about(
    pool: &PgPool,
    project_id: Uuid,
    paths: &[String],
    relative: &str,
    limit: i64,
    viewer: Viewer,
) -> sqlx::Result<Vec<ObservationItem>> {
    let cited = serde_json::json!([{ "path": relative }]);
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at, state
         FROM observations o
         WHERE o.project_id = $1 AND o.state = 'live' AND o.kind <> 'plan' AND {}
           AND ((o.files_read || o.files_modified) && $2::text[] OR o.file_refs @> $3::jsonb)
         ORDER BY o.created_at DESC, o.id DESC
         LIMIT $4",
        Viewer::condition("o", 5, 6)
    )))
    .bind(project_id)
    .bind(paths)
    .bind(cited)
    .bind(limit)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}

/// At most `limit` `live` observations of the project that read or modified
/// any of `paths` (the worktree's changed files), newest first; plans left
/// out. Answered by the GIN index on the files (migration 0017).
#[tracing::instrument(skip(pool, paths), fields(paths = paths.len()))]
pub async fn of_files(
    pool: &PgPool,
    project_id: Uuid,
    paths: &[String],
    limit: i64,
    viewer: Viewer,
) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at, state
         FROM observations o
         WHERE o.project_id = $1 AND o.state = 'live' AND o.kind <> 'plan' AND {}
           AND (o.files_read || o.files_modified) && $2::text[]
         ORDER BY o.created_at DESC, o.id DESC
         LIMIT $3",
        Viewer::condition("o", 4, 5)
    )))
    .bind(project_id)
    .bind(paths)
    .bind(limit)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}
