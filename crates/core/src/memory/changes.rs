//! The log of what happened to memories (migration 0014), read side: every
//! change of an observation's state, written only by the lifecycle's
//! transitions (`lifecycle`), each reversible (`lifecycle::revert`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

use crate::memory::lifecycle::{Action, MemoryState};
use crate::tenancy::Viewer;

#[derive(Debug, Serialize, FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemoryChange {
    pub id: Uuid,
    pub observation_id: Uuid,
    /// `restore` for a revert.
    pub action: Action,
    pub from_state: MemoryState,
    pub to_state: MemoryState,
    /// supersede: the newer observation; merge: the one kept; restore: the change reverted.
    pub related_id: Option<Uuid>,
    pub reason: String,
    pub actor: String,
    pub created_at: DateTime<Utc>,
    pub reverted_at: Option<DateTime<Utc>>,
    pub reverted_by: Option<String>,
}

pub(crate) const COLUMNS: &str =
    "id, observation_id, action, from_state, to_state, related_id, reason, actor, created_at,
                       reverted_at, reverted_by";

/// The project's changes the viewer may see, newest first; of one
/// observation (as the changed one or the related one) when `observation`
/// is set. A change whose observation (or newer, kept one) is private to
/// someone else is left out: its ids would name a memory the viewer cannot read.
#[tracing::instrument(skip(pool), err)]
pub async fn list(
    pool: &PgPool,
    project_id: Uuid,
    observation: Option<Uuid>,
    limit: i64,
    viewer: Viewer,
) -> sqlx::Result<Vec<MemoryChange>> {
    let visible = Viewer::condition("o", 4, 5);
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM memory_changes c
         WHERE c.project_id = $1 AND ($2::uuid IS NULL OR c.observation_id = $2 OR c.related_id = $2)
           AND EXISTS (SELECT 1 FROM observations o WHERE o.id = c.observation_id AND {visible})
           AND (c.related_id IS NULL OR c.action = 'restore'
                OR EXISTS (SELECT 1 FROM observations o WHERE o.id = c.related_id AND {visible}))
         ORDER BY c.created_at DESC, c.id DESC LIMIT $3"
    )))
    .bind(project_id)
    .bind(observation)
    .bind(limit)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(pool)
    .await
}
