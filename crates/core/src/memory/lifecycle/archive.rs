//! Retirement: in a project with a retention policy (`projects.retention_days`,
//! migration 0017), an observation older than that many days and not
//! retrieved for as long (`memory_retrievals`: search hits and injected
//! context) is archived. An archived memory is kept and found by id, never
//! injected or searched; the API can restore it (`memory_changes`).

use sqlx::PgPool;

/// Observations archived per statement.
pub const BATCH: i64 = 500;

/// The statement: `$1` batch, `$2` actor.
pub const ARCHIVE_SQL: &str = "
WITH due AS (
    SELECT o.id, o.state, p.retention_days
    FROM projects p
    CROSS JOIN LATERAL (
        SELECT o.id, o.state FROM observations o
        WHERE o.project_id = p.id AND o.created_at < now() - p.retention_days * interval '1 day'
          AND o.state IN ('live', 'stale', 'superseded')
          AND NOT EXISTS (SELECT 1 FROM memory_retrievals r WHERE r.observation_id = o.id
                          AND r.last_retrieved_at >= now() - p.retention_days * interval '1 day')
        ORDER BY o.created_at LIMIT $1
        FOR UPDATE OF o SKIP LOCKED) o
    WHERE p.retention_days IS NOT NULL
    LIMIT $1
), archived AS (
    UPDATE observations o SET state = 'archived', state_changed_at = now()
    FROM due WHERE o.id = due.id AND o.state = due.state
    RETURNING o.id, o.team_id, o.project_id, due.state AS from_state, due.retention_days
), logged AS (
    INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state, reason, actor)
    SELECT gen_random_uuid(), team_id, project_id, id, 'archive', from_state, 'archived',
           'older than the project''s retention of ' || retention_days || ' days and not retrieved since', $2
    FROM archived
)
SELECT count(*) FROM archived";

/// One batch; returns how many were archived.
#[tracing::instrument(skip(pool))]
pub async fn once(pool: &PgPool, actor: &str) -> sqlx::Result<i64> {
    sqlx::query_scalar(ARCHIVE_SQL)
        .bind(BATCH)
        .bind(actor)
        .fetch_one(pool)
        .await
}
