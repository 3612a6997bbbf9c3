//! `restore` after erasure: an observation that another one had merged or
//! superseded goes back to `live` when the one that replaced it is erased
//! with its author's data (`store::erasure`), so other people's memory is
//! not left hidden behind a memory that no longer exists.

use sqlx::PgConnection;
use uuid::Uuid;

/// The statement: `$1` team, `$2` the erased member, `$3` actor.
const RESTORE_SQL: &str = "
WITH gone AS (
    SELECT id FROM observations WHERE team_id = $1 AND member_id = $2
), back AS (
    UPDATE observations o SET state = 'live', state_changed_at = now(), replaced_by = NULL
    FROM (SELECT o.id, o.state FROM observations o
          WHERE o.team_id = $1 AND o.replaced_by IN (SELECT id FROM gone)
            AND o.state IN ('merged', 'superseded') AND o.member_id IS DISTINCT FROM $2
          FOR UPDATE) was
    WHERE o.id = was.id
    RETURNING o.id, o.team_id, o.project_id, was.state AS from_state
), logged AS (
    INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state, reason, actor)
    SELECT gen_random_uuid(), team_id, project_id, id, 'restore', from_state, 'live',
           'the memory that replaced it was erased with its author''s data', $3
    FROM back
)
SELECT count(*) FROM back";

/// Restores the observations the member's memories had replaced; how many.
#[tracing::instrument(skip(conn))]
pub async fn restore_replaced_by_member(
    conn: &mut PgConnection,
    team_id: Uuid,
    member_id: Uuid,
    actor: &str,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(RESTORE_SQL)
        .bind(team_id)
        .bind(member_id)
        .bind(actor)
        .fetch_one(conn)
        .await
}
