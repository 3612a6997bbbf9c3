//! The ingest transaction's steps: resolve the session, apply the job plan,
//! insert the event. Runs inside a transaction (or a savepoint, for batches)
//! that the caller rolls back when the event turns out to be a duplicate.

use sqlx::PgConnection;
use uuid::Uuid;

use super::{
    EventKind, IncomingEvent, SessionTarget,
    plan::{JobPlan, plan},
};
use crate::{
    error::{Error, Result},
    ingest::Coalescing,
    sessions::end,
    store::{
        events::{self, EventRow, NewEvent},
        jobs::{self, JobRow},
        sessions::{self, SessionChange, SessionKey, SessionRow},
    },
    tenancy::ProjectRef,
};

// Built once per event and moved straight into the answer; boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Written {
    Stored {
        event: EventRow,
        session: Option<SessionRow>,
        /// The job the event fed, if any.
        job: Option<JobRow>,
        /// Every job the write made due, to wake after commit.
        due: Vec<Uuid>,
    },
    /// Already stored under this idempotency key.
    Duplicate { key: String },
    /// The event belongs to a turn whose prompt was entirely private.
    PrivateTurn,
}

pub async fn write(
    conn: &mut PgConnection,
    project: ProjectRef,
    coalescing: &Coalescing,
    ev: &IncomingEvent,
    entirely_private_prompt: bool,
) -> Result<Written> {
    let change = match ev.kind {
        EventKind::SessionStart => SessionChange::Open,
        EventKind::UserPrompt => SessionChange::NewTurn {
            private: entirely_private_prompt,
        },
        EventKind::SessionEnd => SessionChange::Close,
        _ => SessionChange::None,
    };
    if let Some(key) = repeated_prompt(&mut *conn, project, ev).await? {
        return Ok(Written::Duplicate { key });
    }
    let session = resolve_session(&mut *conn, project, ev, change).await?;
    let prompt_number = session.as_ref().map(|s| s.prompt_counter);
    if let Some(s) = &session
        && ev.kind.is_turn_scoped()
        && s.private_prompt_number.is_some()
        && s.private_prompt_number == prompt_number
    {
        return Ok(Written::PrivateTurn);
    }

    let key = match (ev.key_per_turn, prompt_number) {
        (true, Some(turn)) => std::borrow::Cow::Owned(format!("{}:turn{turn}", ev.idempotency_key)),
        _ => std::borrow::Cow::Borrowed(ev.idempotency_key.as_str()),
    };
    let event_id = Uuid::now_v7();
    let (job, due) = apply_plan(&mut *conn, project, coalescing, ev, session.as_ref(), event_id).await?;
    super::observe::link_trace(&mut *conn, job.as_ref()).await?;
    let inserted = events::insert(
        &mut *conn,
        NewEvent {
            id: event_id,
            project,
            session_id: session.as_ref().map(|s| s.id),
            job_id: job.as_ref().map(|j| j.id),
            source_adapter: &ev.source_adapter,
            source_type: &ev.source_type,
            event_type: &ev.event_type,
            platform_source: ev.platform_source.as_deref(),
            source_event_id: ev.source_event_id.as_deref(),
            idempotency_key: &key,
            prompt_number,
            tool_name: ev.tool_name.as_deref(),
            payload: &ev.payload,
            metadata: &ev.metadata,
            occurred_at: ev.occurred_at,
            member_id: ev.actor.member_id,
        },
    )
    .await?;
    if inserted.is_some() {
        let session_id = session.as_ref().map(|s| s.id);
        super::plan_capture::capture(&mut *conn, project, session_id, prompt_number, ev).await?;
    }
    Ok(match inserted {
        Some(event) => {
            super::observe::stored(ev);
            Written::Stored {
                event,
                session,
                job,
                due,
            }
        }
        None => Written::Duplicate {
            key: key.into_owned(),
        },
    })
}

/// An id-less prompt whose text is the open turn's own prompt is a retry (a
/// client's, or a replay), not a new turn: the turn's prompt hash is kept on
/// the session until the turn ends (Stop), so the same words typed again in
/// the next turn still open one. Returns the stored event's key.
async fn repeated_prompt(
    conn: &mut PgConnection,
    project: ProjectRef,
    ev: &IncomingEvent,
) -> Result<Option<String>> {
    let SessionTarget::Agent(key) = &ev.session else {
        return Ok(None);
    };
    let Some(hash) = key
        .prompt_hash
        .as_deref()
        .filter(|_| ev.kind == EventKind::UserPrompt && ev.key_per_turn)
    else {
        return Ok(None);
    };
    // Locked, so a retry racing the first attempt waits for it and sees its turn.
    let open = sessions::find_by_key_for_update(conn, project, &key.agent, &key.external_session_id).await?;
    Ok(open
        .filter(|s| s.last_prompt_hash.as_deref() == Some(hash))
        .map(|s| format!("{}:turn{}", ev.idempotency_key, s.prompt_counter)))
}

async fn resolve_session(
    conn: &mut PgConnection,
    project: ProjectRef,
    ev: &IncomingEvent,
    change: SessionChange,
) -> Result<Option<SessionRow>> {
    let mut key = match &ev.session {
        SessionTarget::None => return Ok(None),
        SessionTarget::Agent(key) => key.clone(),
        SessionTarget::Server(id) => {
            let row = sessions::get(&mut *conn, project.team_id, Some(project.id), *id)
                .await?
                .ok_or_else(|| Error::not_found("session_not_found", "no such session in this project"))?;
            if change == SessionChange::None {
                return Ok(Some(row));
            }
            SessionKey {
                agent: row.agent,
                external_session_id: row.external_session_id,
                ..Default::default()
            }
        }
        SessionTarget::Content {
            content_session_id,
            agent,
        } => match sessions::find_by_content_id(&mut *conn, project, content_session_id).await? {
            Some(row) if change == SessionChange::None => return Ok(Some(row)),
            Some(row) => SessionKey {
                agent: row.agent,
                external_session_id: row.external_session_id,
                ..Default::default()
            },
            None => SessionKey {
                agent: agent.clone(),
                external_session_id: content_session_id.clone(),
                content_session_id: Some(content_session_id.clone()),
                platform_source: Some(agent.clone()),
                ..Default::default()
            },
        },
    };
    key.actor = ev.actor;
    let (row, _) = sessions::upsert(conn, project, &key, change).await?;
    Ok(Some(row))
}

async fn apply_plan(
    conn: &mut PgConnection,
    project: ProjectRef,
    coalescing: &Coalescing,
    ev: &IncomingEvent,
    session: Option<&SessionRow>,
    event_id: Uuid,
) -> Result<(Option<JobRow>, Vec<Uuid>)> {
    let plan = plan(ev.kind, ev.generate);
    let Some(session) = session else {
        // Without a session there is no turn: an event that asks for generation gets its own job.
        if plan == JobPlan::None {
            return Ok((None, vec![]));
        }
        let key = format!("observations:event:{event_id}");
        let job = jobs::ensure_job(conn, project, None, Some(event_id), "observations", None, &key).await?;
        let due = vec![job.id];
        return Ok((Some(job), due));
    };
    let turn = session.prompt_counter;
    match plan {
        JobPlan::None => Ok((None, vec![])),
        JobPlan::JoinTurn => {
            let job = jobs::join_turn(
                conn,
                project,
                (session.id, turn),
                event_id,
                coalescing,
                ev.seal_now,
            )
            .await?;
            let due = if job.is_due() { vec![job.id] } else { vec![] };
            Ok((Some(job), due))
        }
        JobPlan::EndTurn => {
            sessions::close_turn_prompt(&mut *conn, session.id).await?;
            let ended = end::end_turn(conn, project, session.id, turn, Some(event_id), true).await?;
            Ok((ended.summary, ended.due))
        }
        JobPlan::EndSession => {
            let ended = end::end_session(conn, project, session.id, turn, Some(event_id)).await?;
            Ok((ended.summary, ended.due))
        }
    }
}
