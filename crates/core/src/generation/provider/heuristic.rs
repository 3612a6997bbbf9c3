//! The offline, deterministic provider: no model, only what the events show
//! (files read and modified, commands run and which failed, errors seen, the
//! prompt), written in COMPAT.md §3 XML so it goes through the same parser as
//! a model's answer. The default when no key is configured.
//!
//! Summaries lead `completed` with the agent's final message (the
//! `last_assistant_message` of the turn's `Stop`, or of each turn of a
//! session), trimmed: the agent's own account of what it did and why. File
//! lists are deduplicated across spellings of a path (see [`files`]).

mod files;
mod observation;
mod summary;
mod xml;

use std::time::Instant;

use cairn_shared::jobs::JobType;

use super::{Completion, Provider, ProviderError, Request, Usage};
use crate::generation::material::EventRecord;
use crate::generation::material::Material;
use crate::generation::prompt::digest::{Digest, split_turns};
use crate::generation::prompt::estimate_tokens;
use crate::generation::prompt::payload;

/// Why an observation job with no tool events is skipped.
pub const NO_TOOL_ACTIVITY: &str = "no tool activity";
/// Why a summary job with no prompt, tool event or message is skipped.
pub const NOTHING_RECORDED: &str = "nothing recorded";

/// The heuristic provider (`heuristic` / `heuristic-v1`).
pub struct Heuristic;

#[async_trait::async_trait]
impl Provider for Heuristic {
    fn name(&self) -> &'static str {
        "heuristic"
    }
    fn model(&self) -> &str {
        "heuristic-v1"
    }
    /// Answers from `request.material` alone; never fails.
    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError> {
        let started = Instant::now();
        let text = answer_with(request.material, request.summarise_turn);
        let usage = Usage {
            provider: self.name().into(),
            model: self.model().into(),
            input_tokens: estimate_tokens(request.user) as u64,
            output_tokens: estimate_tokens(&text) as u64,
            latency_ms: started.elapsed().as_millis() as u64,
            ..Usage::default()
        };
        Ok(Completion { text, usage })
    }
}

/// The provenance of what the heuristic writes (no tokens).
pub fn usage() -> Usage {
    Usage {
        provider: "heuristic".into(),
        model: "heuristic-v1".into(),
        ..Usage::default()
    }
}

/// The XML answer for a job's material; the same material always gives the
/// same text. Reads the events through the privacy filter
/// ([`Material::redacted`]), as the prompt builder does, so no secret
/// reaches an observation or a summary.
pub fn answer(material: &Material) -> String {
    let material = &material.redacted();
    match material.job_type {
        JobType::Observations => observations(material),
        JobType::TurnSummary | JobType::SessionSummary => summary(material),
    }
}

/// [`answer`], and for an observation job that ends its turn
/// (`summarise_turn`) the turn's summary after its observations.
pub fn answer_with(material: &Material, summarise_turn: bool) -> String {
    let mut text = answer(material);
    if summarise_turn && material.job_type == JobType::Observations {
        text.push_str(&turn_summary(material));
    }
    text
}

/// The summary of the turn an observation job's material covers (its
/// prompt, tool events and last message), or a skip marker.
pub fn turn_summary(material: &Material) -> String {
    let mut turn = material.redacted();
    turn.job_type = JobType::TurnSummary;
    summary(&turn)
}

/// One observation per turn with tool activity, or a skip marker.
fn observations(material: &Material) -> String {
    let out: String = split_turns(&material.events)
        .into_iter()
        .map(Digest::of)
        .filter(|digest| digest.tool_events > 0)
        .map(|mut digest| {
            files::dedup(&mut digest, material.cwd.as_deref());
            observation::render(&digest, material.cwd.as_deref())
        })
        .collect();
    if out.is_empty() {
        xml::skip(NO_TOOL_ACTIVITY)
    } else {
        out
    }
}

/// The summary of the whole material, or a skip marker when nothing was recorded.
fn summary(material: &Material) -> String {
    let mut digest = Digest::of(&material.events);
    if digest.tool_events == 0 && digest.prompts.is_empty() && digest.last_message.is_none() {
        return xml::skip(NOTHING_RECORDED);
    }
    let cwd = material.cwd.as_deref();
    files::dedup(&mut digest, cwd);
    let finals: Vec<&str> = match material.job_type {
        JobType::SessionSummary => split_turns(&material.events)
            .into_iter()
            .filter_map(final_message)
            .collect(),
        _ => final_message(&material.events).into_iter().collect(),
    };
    summary::render(&summary::Facts {
        digest: &digest,
        read_only: files::read_not_modified(&digest, cwd),
        modified: files::shown(&digest.files_modified, cwd),
        finals: &finals,
    })
}

/// The agent's final message in `events`: that of the last `Stop`, else
/// the last message of any event (a `SubagentStop`'s).
fn final_message(events: &[EventRecord]) -> Option<&str> {
    let last = |stop_only: bool| {
        events
            .iter()
            .rev()
            .filter(|e| !stop_only || e.event_type == "Stop")
            .find_map(payload::last_assistant_message)
    };
    last(true).or_else(|| last(false)).map(str::trim)
}

#[cfg(test)]
mod tests;
