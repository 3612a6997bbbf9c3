//! Events of known sessions' open turns, stored by one call of
//! `cairn_store_turn_events` (migration 0030): for each event in order, the
//! session read, the event's key claimed, the turn's observation job joined
//! (or created), the event inserted. One round trip and one commit for a
//! whole batch (`ingest/group_commit.rs`) instead of a transaction of five
//! statements per event, for the events that make up most of the traffic
//! (tool calls).

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, Row, postgres::PgRow, prelude::FromRow};
use uuid::Uuid;

use super::{jobs::JobRow, sessions::SessionRow};

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

/// One event to store in its session's open turn, owned (it waits in a
/// batch on another task).
#[derive(Clone, Debug)]
pub struct TurnEventInput {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub agent: String,
    pub external_session_id: String,
    /// The id of the turn's job should this event create it.
    pub job_id: Uuid,
    pub source_adapter: String,
    pub source_type: String,
    pub event_type: String,
    pub platform_source: Option<String>,
    pub source_event_id: Option<String>,
    /// The event's key gets `:turn<n>` appended.
    pub key_per_turn: bool,
    pub idempotency_key: String,
    pub tool_name: Option<String>,
    pub payload: serde_json::Value,
    pub metadata: serde_json::Value,
    pub occurred_at: DateTime<Utc>,
    pub member_id: Option<Uuid>,
    /// Join (or create) the turn's observation job.
    pub generate: bool,
    pub seal_now: bool,
    /// The trace to continue on the job (the first event's is kept).
    pub traceparent: Option<String>,
}

/// How turns are cut into jobs (the engine's coalescing settings).
#[derive(Clone, Copy, Debug)]
pub struct TurnLimits {
    pub max_turn_events: i32,
    pub turn_idle: std::time::Duration,
}

/// Stores `events` in order, each in the open turn of its session: its key
/// first (nothing else is written for a duplicate), then the turn's job is
/// joined (the same upsert as the transaction path: it waits for, and
/// finds, a job another event is creating or sealing), then the event naming
/// that job. One answer per event, in order: `None` when the project has no
/// such session (the caller takes the transaction path, which creates it).
#[tracing::instrument(skip_all, err, fields(events = events.len()))]
pub async fn insert_many(
    db: impl PgExecutor<'_>,
    limits: TurnLimits,
    events: &[TurnEventInput],
) -> sqlx::Result<Vec<Option<TurnEvent>>> {
    fn col<'a, T>(events: &'a [TurnEventInput], f: impl Fn(&'a TurnEventInput) -> T) -> Vec<T> {
        events.iter().map(f).collect()
    }
    let rows: Vec<PgRow> = sqlx::query(
        "SELECT r.ord, (r.sess).*, r.event_id, r.event_received_at, r.event_created_at, r.event_key,
                (r.job).id AS job_id, (r.job).team_id AS job_team_id, (r.job).project_id AS job_project_id,
                (r.job).session_id AS job_session_id, (r.job).agent_event_id AS job_agent_event_id,
                (r.job).job_type AS job_type, (r.job).source_type AS job_source_type,
                (r.job).prompt_number AS job_prompt_number, (r.job).status AS job_status,
                (r.job).attempts AS job_attempts, (r.job).max_attempts AS job_max_attempts,
                (r.job).retried_count AS job_retried_count, (r.job).event_count AS job_event_count,
                (r.job).sealed AS job_sealed, (r.job).next_attempt_at AS job_next_attempt_at,
                (r.job).last_error AS job_last_error, (r.job).created_at AS job_created_at,
                (r.job).updated_at AS job_updated_at, (r.job).completed_at AS job_completed_at,
                (r.job).failed_at AS job_failed_at, (r.job).cancelled_at AS job_cancelled_at
           FROM cairn_store_turn_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                                        $16, $17, $18, $19, $20, $21, $22, $23) r
          ORDER BY r.ord",
    )
    .bind(limits.max_turn_events)
    .bind(limits.turn_idle)
    .bind(col(events, |e| e.id))
    .bind(col(events, |e| e.team_id))
    .bind(col(events, |e| e.project_id))
    .bind(col(events, |e| e.agent.as_str()))
    .bind(col(events, |e| e.external_session_id.as_str()))
    .bind(col(events, |e| e.job_id))
    .bind(col(events, |e| e.source_adapter.as_str()))
    .bind(col(events, |e| e.source_type.as_str()))
    .bind(col(events, |e| e.event_type.as_str()))
    .bind(col(events, |e| e.platform_source.as_deref()))
    .bind(col(events, |e| e.source_event_id.as_deref()))
    .bind(col(events, |e| e.key_per_turn))
    .bind(col(events, |e| e.idempotency_key.as_str()))
    .bind(col(events, |e| e.tool_name.as_deref()))
    .bind(col(events, |e| &e.payload))
    .bind(col(events, |e| &e.metadata))
    .bind(col(events, |e| e.occurred_at))
    .bind(col(events, |e| e.member_id))
    .bind(col(events, |e| e.generate))
    .bind(col(events, |e| e.seal_now))
    .bind(col(events, |e| e.traceparent.as_deref()))
    .fetch_all(db)
    .await?;
    if rows.len() != events.len() {
        return Err(sqlx::Error::Protocol(format!(
            "cairn_store_turn_events answered {} rows for {} events",
            rows.len(),
            events.len()
        )));
    }
    rows.iter().map(decode).collect()
}

fn decode(row: &PgRow) -> sqlx::Result<Option<TurnEvent>> {
    if row.try_get::<Option<Uuid>, _>("id")?.is_none() {
        return Ok(None);
    }
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
    Ok(Some(TurnEvent {
        session,
        stored,
        idempotency_key: row.try_get("event_key")?,
        job,
    }))
}
