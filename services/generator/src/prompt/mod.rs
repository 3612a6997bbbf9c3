//! The prompt builder: one prompt per job from its material, bounded by
//! per-event and total budgets, with a stable system prefix per job kind so
//! provider prompt caching hits.
//!
//! - `system`: the two system prompts (observations, summaries);
//! - `observations`, `summary`: the user part of each job kind;
//! - `render`: one event as text; `fit`: items within the total budget;
//! - `elide`: text within a character budget;
//! - `payload`, `digest`: reading events, shared with the heuristic provider.

pub(crate) mod digest;
pub(crate) mod elide;
mod fit;
mod observations;
pub(crate) mod payload;
mod render;
mod summary;
pub mod system;

use cairn_shared::jobs::JobType;

use self::elide::{elide, truncate};
use crate::material::Material;

/// Longest header value (project, agent, cwd) shown, in characters.
const HEADER_VALUE_CHARS: usize = 300;

/// How much of a job's events a prompt may carry. Counted in characters
/// (Unicode scalar values), not bytes.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Characters kept of one field of one event (head and tail, middle elided).
    pub per_event_chars: usize,
    /// Characters of the whole user part.
    pub total_chars: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            per_event_chars: 4_000,
            total_chars: 60_000,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Prompt {
    /// The same text for every job of a kind.
    pub system: &'static str,
    pub user: String,
}

/// Builds the prompt of a job: the system prompt of its kind and a user part
/// of at most `budget.total_chars` characters. Deterministic: the same
/// material and budget always give the same prompt. The events go through
/// the privacy filter first ([`Material::redacted`]), so a secret stored
/// before its rule existed never reaches a provider.
pub fn build(material: &Material, budget: &Budget) -> Prompt {
    let material = &material.redacted();
    match material.job_type {
        JobType::Observations => Prompt {
            system: system::OBSERVATIONS,
            user: observations::build(material, budget),
        },
        JobType::TurnSummary => Prompt {
            system: system::SUMMARY,
            user: summary::turn(material, budget),
        },
        JobType::SessionSummary => Prompt {
            system: system::SUMMARY,
            user: summary::session(material, budget),
        },
    }
}

/// A rough token count for benchmarks and usage estimates: characters / 4,
/// rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    cairn_shared::tokens::estimate(text)
}

/// The first lines of every user part: job kind, project, agent, cwd, turn.
fn header(kind: &str, material: &Material) -> String {
    let mut out = format!("Job: {kind}\n");
    let mut line = |label: &str, value: &str| {
        out.push_str(&format!("{label}: {}\n", truncate(value, HEADER_VALUE_CHARS)));
    };
    line("Project", &material.project);
    if let Some(agent) = &material.agent {
        line("Agent", agent);
    }
    if let Some(cwd) = &material.cwd {
        line("Working directory", cwd);
    }
    if let Some(turn) = material.prompt_number {
        line("Turn", &turn.to_string());
    }
    out
}

/// The text trimmed and elided to `max_chars`, or `(not recorded)`.
fn optional(text: Option<&str>, max_chars: usize) -> String {
    text.map_or_else(
        || "(not recorded)".into(),
        |t| elide(t.trim(), max_chars).into_owned(),
    )
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod redaction_tests;
#[cfg(test)]
mod tests;
