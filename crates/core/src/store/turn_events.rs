//! An event of a known session's open turn, stored in one statement: the
//! session read, the event's key claimed, the turn's observation job joined
//! (or created), the event inserted. One round trip and one commit instead of a transaction of
//! five, for the events that make up most of the traffic (tool calls).

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, Row, postgres::PgRow, prelude::FromRow};
use uuid::Uuid;

use super::{
    events::NewEvent,
    jobs::JobRow,
    sessions::{SessionKey, SessionRow},
};

/// What the statement did.
pub struct TurnEvent {
    pub session: SessionRow,
    /// The stored event's id and times; `None` when the key was already
    /// stored, or when the turn is private (see `private_turn`).
    pub stored: Option<(Uuid, DateTime<Utc>, DateTime<Utc>)>,
    /// The event's key as stored (made unique per turn where asked).
    pub idempotency_key: String,
    /// The job the event joined.
    pub job: Option<JobRow>,
}

impl TurnEvent {
    /// The turn's prompt was entirely private: nothing was stored.
    pub fn private_turn(&self) -> bool {
        self.session.private_prompt_number.is_some()
            && self.session.private_prompt_number == Some(self.session.prompt_counter)
    }
}

/// How the event joins its turn.
pub struct Join<'a> {
    /// Join (or create) the turn's observation job.
    pub generate: bool,
    pub max_turn_events: i32,
    pub turn_idle: std::time::Duration,
    pub seal_now: bool,
    /// The trace to continue on the job (the first event's is kept).
    pub traceparent: Option<&'a str>,
    /// The event's key gets `:turn<n>` appended.
    pub key_per_turn: bool,
}

/// Stores `e` in the open turn of the session `key` names: its key first
/// (nothing else is written for a duplicate), then the turn's job is joined
/// (the same upsert as the transaction path: it waits for, and finds, a job
/// another event is creating or sealing), then the event naming that job.
/// `None` when the project has no such session (the caller takes the
/// transaction path, which creates it).
#[tracing::instrument(skip_all, err, fields(project = %e.project.id))]
pub async fn insert(
    db: impl PgExecutor<'_>,
    key: &SessionKey,
    e: NewEvent<'_>,
    join: Join<'_>,
) -> sqlx::Result<Option<TurnEvent>> {
    let job_id = Uuid::now_v7();
    let row: Option<PgRow> = sqlx::query(concat!(
        "WITH s AS (
             SELECT ",
        super::sessions::columns!(),
        " FROM sessions WHERE project_id = $3 AND agent = $4 AND external_session_id = $5
         ),
         k AS (
             INSERT INTO agent_event_keys (project_id, idempotency_key, event_id, received_at)
             SELECT $3, CASE WHEN $12 THEN $13 || ':turn' || s.prompt_counter ELSE $13 END, $1, now()
               FROM s
              WHERE s.private_prompt_number IS DISTINCT FROM s.prompt_counter
             ON CONFLICT (project_id, idempotency_key) DO NOTHING
             RETURNING idempotency_key
         ),
         j AS (
             INSERT INTO generation_jobs AS j (id, team_id, project_id, session_id, agent_event_id, job_type,
                 source_type, prompt_number, event_count, sealed, next_attempt_at, idempotency_key, traceparent)
             SELECT $6, $2, $3, s.id, $1, 'observations', 'agent_event', s.prompt_counter, 1, $22 OR 1 >= $20,
                 CASE WHEN $22 OR 1 >= $20 THEN now() ELSE now() + $21 END,
                 'observations:' || s.id || ':' || s.prompt_counter || ':' || $6, $23
               FROM s, k
              WHERE $19
             ON CONFLICT (session_id, prompt_number) WHERE status = 'queued' AND job_type = 'observations' AND NOT sealed
             DO UPDATE SET
                 event_count = j.event_count + 1,
                 sealed = $22 OR j.event_count + 1 >= $20,
                 next_attempt_at = CASE WHEN $22 OR j.event_count + 1 >= $20 THEN now() ELSE now() + $21 END,
                 traceparent = coalesce(j.traceparent, EXCLUDED.traceparent),
                 updated_at = now()
             RETURNING ",
        super::jobs::columns!(),
        "
         ),
         e AS (
             INSERT INTO agent_events (id, team_id, project_id, session_id, job_id, source_adapter, source_type,
                 event_type, platform_source, source_event_id, idempotency_key, prompt_number, tool_name,
                 payload, metadata, occurred_at, member_id)
             SELECT $1, $2, $3, s.id, j.id, $7, $8, $9, $10, $11, k.idempotency_key, s.prompt_counter, $14, $15,
                 $16, $17, $18
               FROM s CROSS JOIN k LEFT JOIN j ON true
             RETURNING id, received_at, created_at
         )
         SELECT s.*, e.id AS event_id, e.received_at AS event_received_at, e.created_at AS event_created_at,
                CASE WHEN $12 THEN $13 || ':turn' || s.prompt_counter ELSE $13 END AS event_key,
                j.id AS job_id, j.team_id AS job_team_id, j.project_id AS job_project_id,
                j.session_id AS job_session_id, j.agent_event_id AS job_agent_event_id, j.job_type AS job_type,
                j.source_type AS job_source_type, j.prompt_number AS job_prompt_number, j.status AS job_status,
                j.attempts AS job_attempts, j.max_attempts AS job_max_attempts,
                j.retried_count AS job_retried_count, j.event_count AS job_event_count, j.sealed AS job_sealed,
                j.next_attempt_at AS job_next_attempt_at, j.last_error AS job_last_error,
                j.created_at AS job_created_at, j.updated_at AS job_updated_at,
                j.completed_at AS job_completed_at, j.failed_at AS job_failed_at,
                j.cancelled_at AS job_cancelled_at
           FROM s LEFT JOIN e ON true LEFT JOIN j ON true"
    ))
    .bind(e.id)
    .bind(e.project.team_id)
    .bind(e.project.id)
    .bind(&key.agent)
    .bind(&key.external_session_id)
    .bind(job_id)
    .bind(e.source_adapter)
    .bind(e.source_type)
    .bind(e.event_type)
    .bind(e.platform_source)
    .bind(e.source_event_id)
    .bind(join.key_per_turn)
    .bind(e.idempotency_key)
    .bind(e.tool_name)
    .bind(e.payload)
    .bind(e.metadata)
    .bind(e.occurred_at)
    .bind(e.member_id)
    .bind(join.generate)
    .bind(join.max_turn_events)
    .bind(join.turn_idle)
    .bind(join.seal_now)
    .bind(join.traceparent)
    .fetch_optional(db)
    .await?;
    row.map(|row| decode(&row)).transpose()
}

fn decode(row: &PgRow) -> sqlx::Result<TurnEvent> {
    let session = SessionRow::from_row(row)?;
    let stored = match row.try_get::<Option<Uuid>, _>("event_id")? {
        Some(id) => Some((
            id,
            row.try_get("event_received_at")?,
            row.try_get("event_created_at")?,
        )),
        None => None,
    };
    let job = match row.try_get::<Option<Uuid>, _>("job_id")? {
        Some(id) => Some(JobRow {
            id,
            team_id: row.try_get("job_team_id")?,
            project_id: row.try_get("job_project_id")?,
            session_id: row.try_get("job_session_id")?,
            agent_event_id: row.try_get("job_agent_event_id")?,
            job_type: row.try_get("job_type")?,
            source_type: row.try_get("job_source_type")?,
            prompt_number: row.try_get("job_prompt_number")?,
            status: row.try_get("job_status")?,
            attempts: row.try_get("job_attempts")?,
            max_attempts: row.try_get("job_max_attempts")?,
            retried_count: row.try_get("job_retried_count")?,
            event_count: row.try_get("job_event_count")?,
            sealed: row.try_get("job_sealed")?,
            next_attempt_at: row.try_get("job_next_attempt_at")?,
            last_error: row.try_get("job_last_error")?,
            created_at: row.try_get("job_created_at")?,
            updated_at: row.try_get("job_updated_at")?,
            completed_at: row.try_get("job_completed_at")?,
            failed_at: row.try_get("job_failed_at")?,
            cancelled_at: row.try_get("job_cancelled_at")?,
        }),
        None => None,
    };
    Ok(TurnEvent {
        session,
        stored,
        idempotency_key: row.try_get("event_key")?,
        job,
    })
}
