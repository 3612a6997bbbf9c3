//! `restore`: a change undone. The observation goes back to the state it
//! had before the change, when it is still in the state the change left it
//! in; a merge's kept observation stops citing the restored one.

use sqlx::PgPool;
use uuid::Uuid;

use super::{Action, MemoryState};
use crate::memory::changes::{COLUMNS, MemoryChange};

/// Why a revert did nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    NotFound,
    /// Already reverted, or itself a revert.
    NotRevertible,
    /// The observation changed state since (`found`).
    StateChanged {
        found: MemoryState,
    },
}

/// Reverts change `change_id` of the project; returns the `restore` change.
#[tracing::instrument(skip(pool))]
pub async fn revert(
    pool: &PgPool,
    project_id: Uuid,
    change_id: Uuid,
    actor: &str,
) -> sqlx::Result<Result<MemoryChange, Refused>> {
    let mut tx = pool.begin().await?;
    let change: Option<MemoryChange> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM memory_changes WHERE id = $1 AND project_id = $2 FOR UPDATE"
    )))
    .bind(change_id)
    .bind(project_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(change) = change else {
        return Ok(Err(Refused::NotFound));
    };
    if change.reverted_at.is_some() || change.action == Action::Restore {
        return Ok(Err(Refused::NotRevertible));
    }
    let found: Option<MemoryState> =
        sqlx::query_scalar("SELECT state FROM observations WHERE id = $1 AND project_id = $2 FOR UPDATE")
            .bind(change.observation_id)
            .bind(project_id)
            .fetch_optional(&mut *tx)
            .await?;
    match found {
        None => return Ok(Err(Refused::NotFound)),
        Some(found) if found != change.to_state => return Ok(Err(Refused::StateChanged { found })),
        Some(_) => {}
    }
    let restored: MemoryChange = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "WITH back AS (
             UPDATE observations SET state = $3, state_changed_at = now(),
                 replaced_by = CASE WHEN $4 IN ('supersede', 'merge') THEN NULL ELSE replaced_by END
             WHERE id = $1 AND project_id = $2
             RETURNING id, team_id, project_id
         ), uncited AS (
             UPDATE observations k
             SET metadata = jsonb_set(k.metadata, '{{merged_from}}', coalesce(
                     (SELECT jsonb_agg(x) FROM jsonb_array_elements(k.metadata -> 'merged_from') x
                      WHERE x <> to_jsonb($1::text)), '[]'::jsonb))
             WHERE $4 = 'merge' AND k.id = $6 AND k.project_id = $2 AND k.metadata ? 'merged_from'
         ), marked AS (
             UPDATE memory_changes SET reverted_at = now(), reverted_by = $5 WHERE id = $7
         )
         INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
                                     related_id, reason, actor)
         SELECT gen_random_uuid(), team_id, project_id, id, 'restore', $8, $3, $7,
                'revert of a ' || $4 || ' change', $5
         FROM back
         RETURNING {COLUMNS}"
    )))
    .bind(change.observation_id)
    .bind(project_id)
    .bind(change.from_state)
    .bind(change.action)
    .bind(actor)
    .bind(change.related_id)
    .bind(change.id)
    .bind(change.to_state)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Ok(restored))
}
