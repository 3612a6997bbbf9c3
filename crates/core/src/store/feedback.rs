//! Feedback on memories (migration 0023): a mark (helpful or misleading)
//! is a row of `memory_feedback`, and the observation's counts move in the
//! same transaction (which stamps the retrieval feed, so every replica's
//! index re-ranks it).

use serde::Serialize;
use sqlx::{PgConnection, prelude::FromRow};

use uuid::Uuid;

use crate::tenancy::Viewer;

/// An observation's feedback so far.
#[derive(Clone, Copy, Debug, Serialize, FromRow, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub project_id: Uuid,
    pub helpful: i32,
    pub misleading: i32,
}

/// Records a mark on an observation of `team_id` (and of `project_id` when
/// the token is bound to one) that `viewer` sees; `None` when there is no
/// such observation (another member's private memory is not there for them).
#[tracing::instrument(skip(conn, note))]
#[allow(clippy::too_many_arguments)]
pub async fn record(
    conn: &mut PgConnection,
    team_id: Uuid,
    project_id: Option<Uuid>,
    viewer: Viewer,
    observation_id: Uuid,
    helpful: bool,
    note: &str,
    actor_token_id: Uuid,
) -> sqlx::Result<Option<Counts>> {
    // The viewer condition is `Viewer::condition("o", 5, 6)`.
    let counts: Option<Counts> = sqlx::query_as(
        "UPDATE observations o
         SET helpful_count = helpful_count + CASE WHEN $4 THEN 1 ELSE 0 END,
             misleading_count = misleading_count + CASE WHEN $4 THEN 0 ELSE 1 END
         WHERE o.id = $1 AND o.team_id = $2 AND ($3::uuid IS NULL OR o.project_id = $3)
           AND (o.visibility = 'team' OR o.member_id = $5::uuid OR $6::bool)
         RETURNING o.project_id, o.helpful_count AS helpful, o.misleading_count AS misleading",
    )
    .bind(observation_id)
    .bind(team_id)
    .bind(project_id)
    .bind(helpful)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(counts) = counts else {
        return Ok(None);
    };
    sqlx::query(
        "INSERT INTO memory_feedback (id, team_id, project_id, observation_id, verdict, note, actor_token_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(Uuid::now_v7())
    .bind(team_id)
    .bind(counts.project_id)
    .bind(observation_id)
    .bind(if helpful { "helpful" } else { "misleading" })
    .bind(note)
    .bind(actor_token_id)
    .execute(&mut *conn)
    .await?;
    Ok(Some(counts))
}

/// One mark, as the dashboard lists it.
#[derive(Clone, Debug, Serialize, FromRow, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    /// `helpful` or `misleading`.
    pub verdict: String,
    pub note: String,
    /// The name of the token that marked it (an agent's or a person's).
    pub marked_by: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// Most marks listed, newest first.
pub const MARKS_LISTED: i64 = 50;

/// An observation's counts and its newest marks, in `team_id` (and
/// `project_id` when the token is bound to one) when `viewer` sees it;
/// `None` when there is no such observation.
#[tracing::instrument(skip(conn))]
pub async fn of(
    conn: &mut PgConnection,
    team_id: Uuid,
    project_id: Option<Uuid>,
    viewer: Viewer,
    observation_id: Uuid,
) -> sqlx::Result<Option<(Counts, Vec<Mark>)>> {
    // The viewer condition is `Viewer::condition("o", 4, 5)`.
    let counts: Option<Counts> = sqlx::query_as(
        "SELECT o.project_id, o.helpful_count AS helpful, o.misleading_count AS misleading
         FROM observations o
         WHERE o.id = $1 AND o.team_id = $2 AND ($3::uuid IS NULL OR o.project_id = $3)
           AND (o.visibility = 'team' OR o.member_id = $4::uuid OR $5::bool)",
    )
    .bind(observation_id)
    .bind(team_id)
    .bind(project_id)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(counts) = counts else {
        return Ok(None);
    };
    let marks = sqlx::query_as(
        "SELECT f.verdict, f.note, t.name AS marked_by, f.created_at
         FROM memory_feedback f LEFT JOIN api_tokens t ON t.id = f.actor_token_id
         WHERE f.observation_id = $1 AND f.team_id = $2
         ORDER BY f.created_at DESC, f.id DESC
         LIMIT $3",
    )
    .bind(observation_id)
    .bind(team_id)
    .bind(MARKS_LISTED)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Some((counts, marks)))
}
