//! Purging a project's memory: everything agents posted to it and
//! everything generated from it, in the caller's transaction.

use sqlx::PgConnection;
use uuid::Uuid;

/// Rows removed, by table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purged {
    pub observations: u64,
    pub summaries: u64,
    pub events: u64,
    pub jobs: u64,
    pub sessions: u64,
}

/// Deletes the project's observations, summaries, events, jobs and sessions.
#[tracing::instrument(skip(conn))]
pub async fn project_memory(conn: &mut PgConnection, project_id: Uuid) -> sqlx::Result<Purged> {
    let mut purged = Purged::default();
    for (table, slot) in [
        ("observations", &mut purged.observations),
        ("summaries", &mut purged.summaries),
        ("agent_events", &mut purged.events),
        ("agent_event_keys", &mut 0),
        ("generation_jobs", &mut purged.jobs),
        ("sessions", &mut purged.sessions),
    ] {
        let sql = format!("DELETE FROM {table} WHERE project_id = $1");
        *slot = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(project_id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    Ok(purged)
}
