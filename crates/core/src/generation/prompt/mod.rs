//! The prompt builder: one prompt per job from its material, bounded by
//! per-event and total budgets, with a stable system prefix per job kind:
//! the long cacheable one (`system`) for providers that cache prompts, a
//! short one (`system_compact`) for those that do not.
//!
//! - `system`, `system_compact`: the system prompts (observations, a
//!   turn's observations and summary together, summaries);
//! - `observations`, `summary`: the user part of each job kind;
//! - `condense`: one tool event as what is worth remembering; `routine`:
//!   events with nothing to remember; `render`: one event as text;
//! - `fit`: items within the total budget; `elide`: text within a character budget;
//! - `payload`, `digest`: reading events, shared with the heuristic provider.

pub(crate) mod condense;
pub(crate) mod digest;
pub(crate) mod elide;
mod fit;
mod observations;
pub(crate) mod payload;
mod render;
mod routine;
mod summary;
pub mod system;
pub mod system_compact;

use cairn_shared::jobs::JobType;

use self::elide::{elide, truncate};
use crate::generation::material::Material;

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

/// Which system prompts a provider gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// The long ones, worth it where the provider caches the prefix (Anthropic).
    #[default]
    Cacheable,
    /// The short ones, for providers that bill the whole prompt on every call.
    Compact,
}

impl Style {
    /// The style for a provider, by its name.
    pub fn for_provider(name: &str) -> Style {
        if name == "anthropic" {
            Style::Cacheable
        } else {
            Style::Compact
        }
    }
}

/// A turn's stored summary, as a session summary reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct TurnSummary {
    pub prompt_number: i32,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
}

/// What a job's prompt is built with, besides its material.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    pub style: Style,
    /// An observation job that ends its turn: ask for the turn's summary too.
    pub summarise_turn: bool,
    /// A session summary: the summaries of its turns.
    pub turn_summaries: &'a [TurnSummary],
}

/// [`build_with`] with the default options: the cacheable system prompts.
pub fn build(material: &Material, budget: &Budget) -> Prompt {
    build_with(material, budget, &Options::default())
}

/// Builds the prompt of a job: the system prompt of its kind and style and
/// a user part of at most `budget.total_chars` characters. Deterministic:
/// the same material, budget and options always give the same prompt. The
/// events go through the privacy filter first ([`Material::redacted`]), so a
/// secret stored before its rule existed never reaches a provider (the turn
/// summaries were written from filtered prompts).
pub fn build_with(material: &Material, budget: &Budget, options: &Options<'_>) -> Prompt {
    let material = &material.redacted();
    let compact = options.style == Style::Compact;
    let pick = |cacheable: &'static str, short: &'static str| if compact { short } else { cacheable };
    match material.job_type {
        JobType::Observations if options.summarise_turn => Prompt {
            system: pick(system::COMBINED, system_compact::COMBINED),
            user: observations::build(material, budget, true),
        },
        JobType::Observations => Prompt {
            system: pick(system::OBSERVATIONS, system_compact::OBSERVATIONS),
            user: observations::build(material, budget, false),
        },
        JobType::TurnSummary => Prompt {
            system: pick(system::SUMMARY, system_compact::SUMMARY),
            user: summary::turn(material, budget),
        },
        JobType::SessionSummary => Prompt {
            system: pick(system::SUMMARY, system_compact::SUMMARY),
            user: summary::session(material, budget, options.turn_summaries),
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
