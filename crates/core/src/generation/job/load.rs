//! Loads a claimed job's material in one round trip: the project's name,
//! the session's agent and working directory, and the job's events, chosen
//! by job type (see `Material::events`), aggregated into one JSON array.
//!
//! [`load`] also settles who writes a turn's summary (`summary_by` on the
//! turn's turn_summary job, migration 0011): the turn's last observation
//! job, when it starts after the Stop, takes it and makes one call for the
//! turn's observations and summary (its material then holds the turn's
//! prompt and Stop too); the turn_summary job then writes nothing. A
//! session summary also gets the summaries of its turns.

use std::time::{Duration, Instant};

use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use sqlx::PgPool;

use crate::generation::material::Material;
use crate::generation::prompt::TurnSummary;
use crate::store::material::{self, Events, Wait};

/// How long a turn or session summary waits for the observation jobs of
/// its turn (or session) to start or finish, checking every `POLL`.
const GRACE: Duration = Duration::from_secs(3);
const SESSION_GRACE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(100);

/// A session summary reads at most this many events (the newest).
const SESSION_EVENT_LIMIT: i64 = 3_000;
/// A turn summary reads at most this many events (the first).
const TURN_EVENT_LIMIT: i64 = 2_000;

pub fn job_type(job: &ClaimedJob) -> JobType {
    job.job_type
}

/// A job's material and what its prompt is built with.
#[derive(Debug)]
pub struct Loaded {
    pub material: Material,
    /// An observation job that writes its turn's summary too.
    pub summarise_turn: bool,
    /// A turn_summary job whose summary another job writes: nothing to do.
    pub summary_elsewhere: bool,
    /// A session summary: its turns' summaries, by turn.
    pub turn_summaries: Vec<TurnSummary>,
}

/// The job's material, after settling who writes its turn's summary.
#[tracing::instrument(skip_all, fields(job_id = %job.id), err)]
pub async fn load(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Loaded> {
    let mut loaded = Loaded {
        material: Material {
            job_id: job.id,
            job_type: job_type(job),
            project: String::new(),
            agent: None,
            cwd: None,
            prompt_number: job.prompt_number,
            events: vec![],
        },
        summarise_turn: false,
        summary_elsewhere: false,
        turn_summaries: vec![],
    };
    match loaded.material.job_type {
        JobType::Observations => {
            let (material, turn_job) = material::load(pool, job, Events::Taking, 0).await?;
            loaded.material = material;
            loaded.summarise_turn = turn_job.is_some();
            return Ok(loaded);
        }
        JobType::TurnSummary => {
            wait_while(pool, Wait::Turn, job, GRACE).await?;
            let owner = material::own_turn_summary(pool, job).await?;
            loaded.summary_elsewhere = owner.is_some_and(|owner| owner != job.id);
        }
        JobType::SessionSummary => {
            wait_while(pool, Wait::Session, job, SESSION_GRACE).await?;
            loaded.turn_summaries = material::turn_summaries(pool, job).await?;
        }
    }
    if loaded.summary_elsewhere {
        return Ok(loaded);
    }
    loaded.material = material(pool, job).await?;
    Ok(loaded)
}

/// Asks `wait` every `POLL` until it answers false or `grace` passes.
async fn wait_while(pool: &PgPool, wait: Wait, job: &ClaimedJob, grace: Duration) -> sqlx::Result<()> {
    let Some(session) = job.session_id else {
        return Ok(());
    };
    let fourth = match job.job_type {
        JobType::TurnSummary => job.prompt_number.map(i64::from).unwrap_or_default(),
        _ => grace.as_millis() as i64,
    };
    let until = Instant::now() + grace;
    loop {
        let waiting = material::waiting(pool, wait, job.id, job.project_id, session, fourth).await?;
        if !waiting || Instant::now() >= until {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The job's material, taking nothing: an observation job's without its
/// turn's Stop.
pub async fn material(pool: &PgPool, job: &ClaimedJob) -> sqlx::Result<Material> {
    let (events, limit) = match job_type(job) {
        JobType::Observations => (Events::Own, 0),
        JobType::TurnSummary => (Events::Turn, TURN_EVENT_LIMIT),
        JobType::SessionSummary => (Events::Session, SESSION_EVENT_LIMIT),
    };
    Ok(material::load(pool, job, events, limit).await?.0)
}
