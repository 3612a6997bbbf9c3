//! The context builder: what a project's memory gives back. For a project
//! (and optionally a query) it gathers the newest summaries, the recent
//! observations and the most relevant few (`gather`), fits them to the
//! project's token budget (`select`), and renders markdown for agents
//! (`markdown`) or JSON for API clients (`dto`). `prompt` is the small,
//! deadline-bound variant answered on UserPromptSubmit, saying each thing
//! once (`once`). Stored text reaches
//! an agent only through `neutralise`, so a memory cannot close the block.

pub mod file_memories;
pub mod focus;
pub mod gather;
pub mod markdown;
pub mod neutralise;
pub mod once;
pub mod prompt;
pub mod select;

use uuid::Uuid;

pub use markdown::{CLOSE_TAG, OPEN_TAG};
pub use neutralise::neutralise;
use select::Selection;

use crate::error::{Error, Result};

/// Budgets a caller may ask for, in tokens (the project setting has the same bounds).
pub const MIN_BUDGET: usize = 200;
pub const MAX_BUDGET: usize = 50_000;
/// A resumed session already holds its context: a short reminder is enough.
const RESUME_BUDGET: usize = 400;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Summaries, the most relevant observations in full, and the index.
    Full,
    /// The newest summaries and index lines only, in a small budget.
    Minimal,
}

impl Mode {
    /// By SessionStart `source`: `resume` continues a conversation that still
    /// holds what it was given; `startup`, `clear` and `compact` start (or
    /// restart) with an empty context, so they get it all.
    pub fn for_source(source: Option<&str>) -> Self {
        match source {
            Some("resume") => Mode::Minimal,
            _ => Mode::Full,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ContextRequest<'a> {
    pub project_id: Uuid,
    pub query: Option<&'a str>,
    /// Overrides the project's budget, clamped to `MIN_BUDGET..=MAX_BUDGET`.
    pub budget_tokens: Option<usize>,
    /// What the receiving end can hold, whatever the budget (an agent's cap
    /// on injected context, Windsurf's on a rules file).
    pub max_tokens: Option<usize>,
    pub mode: Mode,
    /// As of this time (a commit's first sighting): memories written later
    /// are left out, and those whose state changed later are shown as they were.
    pub as_of: Option<chrono::DateTime<chrono::Utc>>,
    /// The branch the session works on (the hook's `branch`): without a
    /// query, memories of this branch's earlier sessions come first.
    pub branch: Option<&'a str>,
    /// The files changed in the worktree (the hook's `changed`, each path in
    /// every form it may be stored in): without a query, memories of these
    /// files come first of all.
    pub changed: &'a [String],
    /// Who reads: private memories reach their author (and admins) only.
    pub viewer: crate::tenancy::Viewer,
}

impl ContextRequest<'_> {
    fn work_at_hand(&self) -> gather::WorkAtHand<'_> {
        gather::WorkAtHand {
            branch: self.branch,
            changed: self.changed,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Built {
    pub project_id: Uuid,
    pub budget_tokens: usize,
    pub selection: Selection,
}

/// The context of a request; a query's relevant memories come from the
/// retrieval engine (by words, and by meaning when there is an embedder).
/// The memories are read from the engine's `read_pool` (a replica may lag).
pub async fn build(state: &crate::engine::Engine, request: &ContextRequest<'_>) -> Result<Built> {
    build_from(state, &state.read_pool, request).await
}

/// [`build`], reading the memories from `reads` (the primary, when a
/// replica failed); the project's settings always from the primary, so a
/// project just created or changed is seen as it is.
pub async fn build_from(
    state: &crate::engine::Engine,
    reads: &sqlx::PgPool,
    request: &ContextRequest<'_>,
) -> Result<Built> {
    let pool = &state.pool;
    let settings = gather::settings(pool, request.project_id)
        .await?
        .ok_or_else(|| Error::not_found("project_not_found", "no such project"))?;
    let mut budget = request
        .budget_tokens
        .unwrap_or(settings.context_budget_tokens as usize)
        .min(request.max_tokens.unwrap_or(MAX_BUDGET))
        .clamp(MIN_BUDGET, MAX_BUDGET);
    let max_details = match request.mode {
        Mode::Full => gather::DETAILED as usize,
        Mode::Minimal => {
            budget = budget.min(RESUME_BUDGET);
            0
        }
    };
    let query = request.query.map(str::trim).filter(|q| !q.is_empty());
    let candidates = gather::candidates(
        state,
        reads,
        request.project_id,
        query,
        &request.work_at_hand(),
        request.as_of,
        request.viewer,
    )
    .await?;
    let selection = select::select(&settings.name, &candidates, budget, max_details);
    let injected = selection
        .details
        .iter()
        .chain(&selection.plans)
        .chain(&selection.index)
        .map(|o| o.id)
        .collect();
    state.retrievals.record(request.project_id, injected);
    Ok(Built {
        project_id: request.project_id,
        budget_tokens: budget,
        selection,
    })
}

#[cfg(test)]
mod tests;
