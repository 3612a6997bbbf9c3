//! Runs events through privacy filtering and the ingest transaction, then
//! publishes wake-ups for the jobs that became due. Duplicates roll back
//! everything they touched and answer with the event first stored, carrying
//! the body the caller sent: an ingest token learns no one else's payload.

use cairn_shared::jobs::Transport;
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use super::{
    IncomingEvent,
    write::{Written, write},
};
use crate::{
    engine::Engine,
    error::{Error, Result},
    store::{
        events::{self, EventRow},
        jobs::{self, JobRow},
        sessions::SessionRow,
    },
    tenancy::ProjectRef,
};

/// Why nothing was stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skipped {
    /// The tool is on the skip list.
    SkippedTool,
    /// The turn's prompt was entirely private.
    PrivateTurn,
}

pub struct Outcome {
    pub event: Option<EventRow>,
    /// False for a duplicate: `event` is the one stored first.
    pub created: bool,
    pub session: Option<SessionRow>,
    pub job: Option<JobRow>,
    pub transport: Transport,
    pub skipped: Option<Skipped>,
    /// Jobs made due by this event, published after commit.
    pending_due: Vec<Uuid>,
}

impl Outcome {
    /// The answer shows the caller's own payload and metadata as filtered:
    /// what was stored for a new event, and for a duplicate not those
    /// stored under the key (which someone else may have sent).
    fn answering_with(mut self, ev: IncomingEvent) -> Self {
        if let Some(event) = &mut self.event {
            event.payload = ev.payload;
            event.metadata = ev.metadata;
        }
        self
    }

    fn skipped(reason: Skipped) -> Self {
        Self {
            event: None,
            created: false,
            session: None,
            job: None,
            transport: Transport::Skipped,
            skipped: Some(reason),
            pending_due: vec![],
        }
    }
}

/// Privacy before storage: drops skip-listed tools, strips private tags,
/// redacts secrets and caps sizes in place. Returns whether the event's
/// prompt was entirely private.
fn filter(state: &Engine, ev: &mut IncomingEvent) -> Result<bool, Skipped> {
    if ev
        .tool_name
        .as_deref()
        .is_some_and(|t| state.privacy.is_skipped_tool(t))
    {
        return Err(Skipped::SkippedTool);
    }
    let private_prompt = ev
        .prompt
        .take()
        .is_some_and(|p| state.privacy.is_entirely_private(&p));
    let mut report = state.privacy.filter_value(&mut ev.payload);
    report.merge(state.privacy.filter_value(&mut ev.metadata));
    if !report.is_clean() {
        if !ev.metadata.is_object() {
            ev.metadata = serde_json::json!({});
        }
        ev.metadata["privacy"] = serde_json::to_value(&report).unwrap_or_default();
    }
    Ok(private_prompt)
}

/// One event: in one statement when it joins a known session's turn
/// (`turn_event.rs`), else in a transaction of its own.
pub async fn ingest_one(state: &Engine, project: ProjectRef, mut ev: IncomingEvent) -> Result<Outcome> {
    let private_prompt = match filter(state, &mut ev) {
        Ok(p) => p,
        Err(reason) => return Ok(Outcome::skipped(reason)),
    };
    if let Some(written) = super::turn_event::store(state, project, &ev).await? {
        let outcome = match written {
            Written::Duplicate { key } => duplicate(state, project, &key).await?,
            Written::PrivateTurn => Outcome::skipped(Skipped::PrivateTurn),
            Written::Stored {
                event,
                session,
                job,
                due,
            } => with_transport(state, stored(event, session, job, due)).await,
        };
        return Ok(outcome.answering_with(ev));
    }
    let mut tx = state.pool.begin().await?;
    let written = write(&mut tx, project, &state.coalescing, &ev, private_prompt).await?;
    Ok(finish(state, project, written, tx).await?.answering_with(ev))
}

/// Many events in one transaction, each in a savepoint so a duplicate undoes
/// only itself. Any other error fails the whole batch.
pub async fn ingest_batch(state: &Engine, evs: Vec<(ProjectRef, IncomingEvent)>) -> Result<Vec<Outcome>> {
    let mut tx = state.pool.begin().await?;
    let mut pending = Vec::with_capacity(evs.len());
    for (index, (project, mut ev)) in evs.into_iter().enumerate() {
        let private_prompt = match filter(state, &mut ev) {
            Ok(p) => p,
            Err(reason) => {
                pending.push((project, ev, Ok(Outcome::skipped(reason))));
                continue;
            }
        };
        let mut savepoint = Connection::begin(&mut *tx).await?;
        let written = write(&mut savepoint, project, &state.coalescing, &ev, private_prompt)
            .await
            .map_err(|e| Error {
                message: format!("events[{index}]: {}", e.message),
                ..e
            })?;
        match written {
            Written::Duplicate { key } => {
                savepoint.rollback().await?;
                pending.push((project, ev, Err(key)));
            }
            Written::PrivateTurn => {
                savepoint.commit().await?;
                pending.push((project, ev, Ok(Outcome::skipped(Skipped::PrivateTurn))));
            }
            Written::Stored {
                event,
                session,
                job,
                due,
            } => {
                savepoint.commit().await?;
                pending.push((project, ev, Ok(stored(event, session, job, due))));
            }
        }
    }
    tx.commit().await?;
    let mut outcomes = Vec::with_capacity(pending.len());
    for (project, ev, result) in pending {
        outcomes.push(match result {
            Ok(outcome) => with_transport(state, outcome).await,
            Err(key) => duplicate(state, project, &key).await?.answering_with(ev),
        });
    }
    Ok(outcomes)
}

fn stored(event: EventRow, session: Option<SessionRow>, job: Option<JobRow>, due: Vec<Uuid>) -> Outcome {
    Outcome {
        event: Some(event),
        created: true,
        session,
        job,
        transport: Transport::Skipped,
        skipped: None,
        pending_due: due,
    }
}

async fn with_transport(state: &Engine, mut outcome: Outcome) -> Outcome {
    let due = std::mem::take(&mut outcome.pending_due);
    outcome.transport = publish(state, &due, outcome.job.as_ref().map(|j| j.id)).await;
    outcome
}

async fn finish(
    state: &Engine,
    project: ProjectRef,
    written: Written,
    tx: sqlx::Transaction<'_, sqlx::Postgres>,
) -> Result<Outcome> {
    match written {
        Written::Duplicate { key } => {
            tx.rollback().await?;
            duplicate(state, project, &key).await
        }
        Written::PrivateTurn => {
            tx.commit().await?;
            Ok(Outcome::skipped(Skipped::PrivateTurn))
        }
        Written::Stored {
            event,
            session,
            job,
            due,
        } => {
            tx.commit().await?;
            Ok(with_transport(state, stored(event, session, job, due)).await)
        }
    }
}

async fn duplicate(state: &Engine, project: ProjectRef, key: &str) -> Result<Outcome> {
    let conn: &mut PgConnection = &mut *state.pool.acquire().await?;
    let event = events::find_by_key(&mut *conn, project.id, key).await?;
    let job = match event.as_ref().and_then(|e| e.job_id) {
        Some(id) => jobs::get(&mut *conn, project.team_id, Some(project.id), id).await?,
        None => None,
    };
    Ok(Outcome {
        event,
        created: false,
        session: None,
        job,
        transport: Transport::Skipped,
        skipped: None,
        pending_due: vec![],
    })
}

/// Pushes a wake-up for each due job. The transport reported is that of the
/// event's own job: `skipped` when it is not due yet.
pub async fn publish(state: &Engine, due: &[Uuid], own_job: Option<Uuid>) -> Transport {
    let mut own = Transport::Skipped;
    for id in due {
        let transport = state.wake.wake(*id).await;
        if Some(*id) == own_job {
            own = transport;
        }
    }
    own
}
