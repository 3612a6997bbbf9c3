//! Agent events: inserted idempotently, read back by id.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, prelude::FromRow};
use uuid::Uuid;

use crate::tenancy::ProjectRef;

#[derive(Clone, Debug, FromRow)]
pub struct EventRow {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub job_id: Option<Uuid>,
    pub source_adapter: String,
    pub source_type: String,
    pub event_type: String,
    pub platform_source: Option<String>,
    pub source_event_id: Option<String>,
    pub prompt_number: Option<i32>,
    pub tool_name: Option<String>,
    pub payload: serde_json::Value,
    pub metadata: serde_json::Value,
    pub occurred_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

macro_rules! columns {
    () => {
        "id, team_id, project_id, session_id, job_id, source_adapter, source_type, event_type, platform_source,
         source_event_id, prompt_number, tool_name, payload, metadata, occurred_at, received_at, created_at"
    };
}

pub struct NewEvent<'a> {
    pub id: Uuid,
    pub project: ProjectRef,
    pub session_id: Option<Uuid>,
    pub job_id: Option<Uuid>,
    pub source_adapter: &'a str,
    pub source_type: &'a str,
    pub event_type: &'a str,
    pub platform_source: Option<&'a str>,
    pub source_event_id: Option<&'a str>,
    pub idempotency_key: &'a str,
    pub prompt_number: Option<i32>,
    pub tool_name: Option<&'a str>,
    pub payload: &'a serde_json::Value,
    pub metadata: &'a serde_json::Value,
    pub occurred_at: DateTime<Utc>,
    /// The member whose agent sent it.
    pub member_id: Option<Uuid>,
}

/// Inserts the event; `None` when its idempotency key is already stored
/// (`agent_event_keys`: a partitioned table cannot hold that unique key).
pub async fn insert(conn: &mut PgConnection, e: NewEvent<'_>) -> sqlx::Result<Option<EventRow>> {
    sqlx::query_as(concat!(
        "WITH k AS (
             INSERT INTO agent_event_keys (project_id, idempotency_key, event_id, received_at)
             VALUES ($3, $11, $1, now())
             ON CONFLICT (project_id, idempotency_key) DO NOTHING
             RETURNING event_id
         )
         INSERT INTO agent_events (id, team_id, project_id, session_id, job_id, source_adapter, source_type,
             event_type, platform_source, source_event_id, idempotency_key, prompt_number, tool_name, payload,
             metadata, occurred_at, member_id)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 FROM k
         RETURNING ",
        columns!()
    ))
    .bind(e.id)
    .bind(e.project.team_id)
    .bind(e.project.id)
    .bind(e.session_id)
    .bind(e.job_id)
    .bind(e.source_adapter)
    .bind(e.source_type)
    .bind(e.event_type)
    .bind(e.platform_source)
    .bind(e.source_event_id)
    .bind(e.idempotency_key)
    .bind(e.prompt_number)
    .bind(e.tool_name)
    .bind(e.payload)
    .bind(e.metadata)
    .bind(e.occurred_at)
    .bind(e.member_id)
    .fetch_optional(conn)
    .await
}

/// The event stored under the key; `None` also when retention has dropped it.
pub async fn find_by_key(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    idempotency_key: &str,
) -> sqlx::Result<Option<EventRow>> {
    sqlx::query_as(concat!(
        "SELECT e.* FROM agent_event_keys k
           CROSS JOIN LATERAL (SELECT ",
        columns!(),
        " FROM agent_events WHERE id = k.event_id AND received_at = k.received_at) e
          WHERE k.project_id = $1 AND k.idempotency_key = $2"
    ))
    .bind(project_id)
    .bind(idempotency_key)
    .fetch_optional(db)
    .await
}

/// One event the caller may see: its team, its project for a project
/// token, and in a `private-first` project its author or an admin.
pub async fn get(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Option<Uuid>,
    id: Uuid,
    viewer: crate::tenancy::Viewer,
) -> sqlx::Result<Option<EventRow>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM agent_events e WHERE id = $1 AND team_id = $2 AND ($3::uuid IS NULL OR project_id = $3)
           AND {}",
        columns!(),
        crate::tenancy::Viewer::raw_condition("e", 4, 5)
    )))
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_optional(db)
    .await
}
