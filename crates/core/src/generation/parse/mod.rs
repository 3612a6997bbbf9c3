//! The lenient reader of the model's XML (COMPAT.md §3): observations, a
//! summary, or `<skip_summary/>`. Never panics, whatever the input.
//!
//! What it forgives:
//! - prose and markdown fences around the XML; any number of observations
//!   (the first 20 usable ones kept) and the first non-blank summary;
//! - tag names in any case, `-` for `_`, attributes on any tag; tags it
//!   does not know (`Vec<String>`, `<b>`) are text;
//! - missing fields (empty), repeated fields (first non-blank value kept,
//!   lists accumulate), `&…;` references and CDATA, comments (dropped);
//! - truncation: an unclosed block runs to the next block or the end of the
//!   input, an unclosed field to the next tag; an observation with no title,
//!   narrative or fact is dropped, and so is a summary with no text;
//! - lists written as lines (bullets stripped) or, for concepts, with
//!   commas; unknown types become `discovery`, unknown concepts are dropped,
//!   files are deduplicated;
//! - bounds: 8,000 chars per field or item, 50 items per list;
//! - U+0000 anywhere (Postgres cannot store it): removed.
//!
//! Files: `scan` (tokens), `entities` (character references), `read`
//! (tokens → blocks), `text` (whitespace, caps, bullets), `vocab` (types
//! and concepts).

mod entities;
mod read;
mod scan;
mod text;
pub(crate) mod vocab;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::generation::provider::{ErrorClass, ProviderError};

/// How much of an unreadable answer is quoted in the error, in chars.
const ERROR_PREVIEW_CHARS: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ParsedObservation {
    /// One of COMPAT.md's types; unknown types are read as `discovery`.
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub narrative: String,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ParsedSummary {
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub observations: Vec<ParsedObservation>,
    pub summary: Option<ParsedSummary>,
    /// `<skip_summary reason="…"/>`: the model found nothing worth keeping.
    pub skipped: Option<String>,
    /// The summary was written by the heuristic, not by whoever answered
    /// (a combined answer that lacked one, or past 80 % of a budget).
    pub summary_by_heuristic: bool,
}

/// Reads a model's answer. An answer with no observation, summary or skip
/// marker is a `parse_error`.
pub fn parse(text: &str) -> Result<Parsed, ProviderError> {
    // Postgres refuses U+0000 in text: kept, it would make the answer
    // unwritable, and the job would pay for the same answer again and again.
    let cleaned;
    let text = if text.contains('\0') {
        cleaned = text.replace('\0', "");
        &cleaned
    } else {
        text
    };
    let parsed = read::read_answer(text);
    if parsed.observations.is_empty() && parsed.summary.is_none() && parsed.skipped.is_none() {
        return Err(ProviderError::new(
            ErrorClass::ParseError,
            unreadable_message(text),
        ));
    }
    Ok(parsed)
}

/// The error message for an answer with nothing usable, quoting its start
/// so an operator can see what came back.
fn unreadable_message(text: &str) -> String {
    let trimmed = text.trim();
    let preview: String = trimmed.chars().take(ERROR_PREVIEW_CHARS).collect();
    let ellipsis = if preview.len() < trimmed.len() { "…" } else { "" };
    format!("no observation, summary or skip_summary in the model's answer: {preview:?}{ellipsis}")
}
