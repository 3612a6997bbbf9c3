//! The timeline around an observation: up to `before` observations just
//! older than the anchor and `after` just newer, in `(created_at, id)`
//! order within the project.
//!
//! The anchor's time is read first and bound as a value, so each side is a
//! short walk of `(project_id, created_at)` from the anchor (a CTE joined in
//! would make the planner scan from the end of the project).

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::store::observations::ObservationRow;
use crate::tenancy::Viewer;

const COLUMNS: &str = "o.id, o.team_id, o.project_id, o.session_id, o.origin, o.kind, o.title, o.subtitle,
    o.facts, o.narrative, o.concepts, o.files_read, o.files_modified, o.content, o.metadata, o.provider,
    o.model, o.prompt_number, o.created_at, o.updated_at";

/// The anchor and its neighbours, oldest first; empty when the project has
/// no such observation. With `member_id`, the neighbours are that member's
/// (the condition is left out otherwise, so each plan fits its index).
#[tracing::instrument(skip(pool), err)]
pub async fn around(
    pool: &PgPool,
    project_id: Uuid,
    anchor: Uuid,
    (before, after): (i64, i64),
    viewer: Viewer,
    member_id: Option<Uuid>,
) -> sqlx::Result<Vec<ObservationRow>> {
    let visible = format!(
        "{}{}",
        Viewer::condition("o", 6, 7),
        if member_id.is_some() {
            " AND o.member_id = $8"
        } else {
            ""
        }
    );
    let at: Option<DateTime<Utc>> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT created_at FROM observations o WHERE project_id = $1 AND id = $2 AND {}",
        Viewer::condition("o", 3, 4)
    )))
    .bind(project_id)
    .bind(anchor)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_optional(pool)
    .await?;
    let Some(at) = at else {
        return Ok(vec![]);
    };
    // `created_at <= $3` first, so the index bounds the scan; `id` breaks ties of time.
    let sql = format!(
        "(SELECT {COLUMNS} FROM observations o
          WHERE o.project_id = $1 AND o.created_at <= $3 AND (o.created_at < $3 OR o.id < $2) AND {visible}
          ORDER BY o.created_at DESC, o.id DESC LIMIT $4)
         UNION ALL
         (SELECT {COLUMNS} FROM observations o WHERE o.project_id = $1 AND o.id = $2)
         UNION ALL
         (SELECT {COLUMNS} FROM observations o
          WHERE o.project_id = $1 AND o.created_at >= $3 AND (o.created_at > $3 OR o.id > $2) AND {visible}
          ORDER BY o.created_at ASC, o.id ASC LIMIT $5)"
    );
    let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .bind(anchor)
        .bind(at)
        .bind(before)
        .bind(after)
        .bind(viewer.member_id)
        .bind(viewer.sees_all);
    if let Some(member) = member_id {
        query = query.bind(member);
    }
    let mut rows: Vec<ObservationRow> = query.fetch_all(pool).await?;
    rows.sort_by_key(|r| (r.created_at, r.id));
    Ok(rows)
}
