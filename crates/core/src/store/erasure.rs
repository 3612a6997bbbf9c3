//! Erasing a member's data (a person who left, or asked): first everything
//! of theirs is read out as an export, then removed in the same
//! transaction — their sessions, events, the jobs and memories drawn from
//! their sessions (with the vectors, feedback, retrieval counts and
//! lifecycle history of those memories), the file versions their sessions
//! saw, their login requests and tokens, their member row — and the audit
//! entries about them keep the fact of the action but lose its detail.
//! Memories of others that theirs had merged or superseded come back
//! (`memory::lifecycle::orphan`). Summaries are written per session, so a
//! summary holds one person's work; none is shared to cut.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows removed, by table, and the member's data as it was.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Erased {
    pub sessions: u64,
    pub events: u64,
    pub observations: u64,
    pub summaries: u64,
    pub restored: i64,
    /// `{sessions, events, observations, summaries}`: each a JSON array of rows.
    pub export: Value,
}

/// The member's rows of each table, as JSON (the export handed back before removal).
const EXPORT_SQL: &str = "
SELECT jsonb_build_object(
    'sessions', (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.created_at), '[]') FROM sessions s
                 WHERE s.team_id = $1 AND s.member_id = $2),
    'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) - 'index_tx' ORDER BY e.occurred_at), '[]') FROM agent_events e
               WHERE e.team_id = $1 AND (e.member_id = $2 OR e.session_id IN
                   (SELECT id FROM sessions WHERE team_id = $1 AND member_id = $2))),
    'observations', (SELECT coalesce(jsonb_agg(to_jsonb(o) - 'index_tx' - 'search' ORDER BY o.created_at), '[]')
                     FROM observations o WHERE o.team_id = $1 AND o.member_id = $2),
    'summaries', (SELECT coalesce(jsonb_agg(to_jsonb(s) - 'index_tx' - 'search' ORDER BY s.created_at), '[]')
                  FROM summaries s WHERE s.team_id = $1 AND s.member_id = $2))";

async fn delete(
    conn: &mut PgConnection,
    sql: &'static str,
    team_id: Uuid,
    member_id: Uuid,
) -> sqlx::Result<u64> {
    Ok(sqlx::query(sql)
        .bind(team_id)
        .bind(member_id)
        .execute(&mut *conn)
        .await?
        .rows_affected())
}

/// Exports, then erases, member `member_id` of team `team_id` in the
/// caller's transaction; `actor` names who asked (for the lifecycle log).
#[tracing::instrument(skip(conn))]
pub async fn member(
    conn: &mut PgConnection,
    team_id: Uuid,
    member_id: Uuid,
    actor: &str,
) -> sqlx::Result<Erased> {
    let export: Value = sqlx::query_scalar(EXPORT_SQL)
        .bind(team_id)
        .bind(member_id)
        .fetch_one(&mut *conn)
        .await?;
    let restored =
        crate::memory::lifecycle::orphan::restore_replaced_by_member(conn, team_id, member_id, actor).await?;
    // Their memories' lifecycle history (its reasons quote titles), then the memories.
    delete(
        conn,
        "DELETE FROM memory_changes WHERE team_id = $1 AND observation_id IN
             (SELECT id FROM observations WHERE team_id = $1 AND member_id = $2)",
        team_id,
        member_id,
    )
    .await?;
    let observations = delete(
        conn,
        "DELETE FROM observations WHERE team_id = $1 AND member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    let summaries = delete(
        conn,
        "DELETE FROM summaries WHERE team_id = $1 AND member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    delete(
        conn,
        "DELETE FROM file_versions f USING sessions s
         WHERE f.session_id = s.id AND s.team_id = $1 AND s.member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    let events = delete(
        conn,
        "DELETE FROM agent_events WHERE team_id = $1 AND member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    // Their sessions, with what hangs on them (jobs and their log, events and memories of the sessions).
    let sessions = delete(
        conn,
        "DELETE FROM sessions WHERE team_id = $1 AND member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    // The idempotency keys of the events gone (a prompt's key is a hash of its words).
    delete(
        conn,
        "DELETE FROM agent_event_keys k USING projects p
         WHERE p.team_id = $1 AND k.project_id = p.id AND $2::uuid IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM agent_events e WHERE e.id = k.event_id AND e.received_at = k.received_at)",
        team_id,
        member_id,
    )
    .await?;
    delete(
        conn,
        "UPDATE audit_log SET detail = '{}'::jsonb, actor_member_id = NULL
         WHERE team_id = $1 AND (actor_member_id = $2 OR (target_type = 'member' AND target_id = $2::text)
                                 OR actor_token_id IN (SELECT id FROM api_tokens WHERE member_id = $2))",
        team_id,
        member_id,
    )
    .await?;
    delete(
        conn,
        "DELETE FROM cli_logins WHERE team_id = $1 AND member_id = $2",
        team_id,
        member_id,
    )
    .await?;
    // Their tokens go with the member row (foreign key, cascade).
    delete(
        conn,
        "DELETE FROM members WHERE team_id = $1 AND id = $2",
        team_id,
        member_id,
    )
    .await?;
    Ok(Erased {
        sessions,
        events,
        observations,
        summaries,
        restored,
        export,
    })
}
