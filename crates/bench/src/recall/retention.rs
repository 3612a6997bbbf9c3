//! Fact retention: which planted facts reach the prompts the generator
//! builds for their session's jobs (`prompt::build`, default budget, on the
//! material `job::load` reads), and which survive into the session's stored
//! observations and summaries.

use std::collections::HashMap;

use cairn_generator::{
    job::load,
    prompt::{self, Budget},
};
use cairn_shared::jobs::state_machine::ClaimedJob;
use sqlx::PgPool;

use super::{data::Dataset, store};

/// Per fact id: (in a prompt, in a stored row).
pub type Retained = HashMap<String, (bool, bool)>;

/// The session id the replay gives `session` (see `events`).
pub fn external_id(session: &str) -> String {
    format!("recall-{session}")
}

/// Retention of every fact of `data`, read from the replayed database.
pub async fn measure(pool: &PgPool, data: &Dataset) -> anyhow::Result<Retained> {
    let budget = Budget::default();
    let mut prompts: HashMap<String, Vec<String>> = HashMap::new();
    for job in store::jobs(pool).await? {
        let Some(session) = job.external_session_id.clone() else {
            continue;
        };
        let claimed = ClaimedJob {
            id: job.id,
            team_id: job.team_id,
            project_id: job.project_id,
            session_id: job.session_id,
            job_type: job.job_type,
            prompt_number: job.prompt_number,
            attempts: 1,
            max_attempts: 1,
            lease_expires_at: chrono::Utc::now(),
            traceparent: None,
        };
        let material = load::material(pool, &claimed).await?;
        let built = prompt::build(&material, &budget);
        prompts.entry(session).or_default().push(built.user);
    }
    let mut out = Retained::new();
    for session in &data.sessions {
        let id = external_id(&session.id);
        let built = prompts.get(&id).map(Vec::as_slice).unwrap_or_default();
        let stored = store::stored_texts(pool, &id).await?;
        for fact in &session.facts {
            let in_prompt = built.iter().any(|p| fact.check.found_in(p));
            let in_store = stored.iter().any(|s| fact.check.found_in(s));
            out.insert(fact.id.clone(), (in_prompt, in_store));
        }
    }
    Ok(out)
}
