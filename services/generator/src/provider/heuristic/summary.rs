//! A `<summary>` from the digest of a turn or a session.

use super::xml::Element;
use crate::prompt::digest::{Digest, Outcome};
use crate::prompt::elide::{elide, join_capped};

/// Longest prompt kept in `request`, in characters.
const PROMPT_CHARS: usize = 2_000;
/// Most files or commands listed per field.
const MAX_LISTED: usize = 20;
/// Most next steps taken from the last message.
const MAX_NEXT_STEPS: usize = 5;

/// The summary, as XML.
pub(super) fn render(digest: &Digest) -> String {
    Element::new("summary")
        .text("request", &request(digest))
        .text("investigated", &investigated(digest))
        .text("learned", &learned(digest))
        .text("completed", &completed(digest))
        .text("next_steps", &next_steps(digest.last_message.as_deref()))
        .text("notes", "heuristic summary (no model)")
        .finish()
}

/// The prompts, one per line.
fn request(digest: &Digest) -> String {
    let prompts: Vec<String> = digest
        .prompts
        .iter()
        .map(|p| elide(p, PROMPT_CHARS).into_owned())
        .collect();
    prompts.join("\n")
}

/// `Read: a, b. Ran: cargo test (failed, then passed).`
fn investigated(digest: &Digest) -> String {
    let commands: Vec<String> = digest
        .command_outcomes()
        .into_iter()
        .map(|(text, outcome)| match outcome {
            Outcome::Passed => format!("`{text}`"),
            Outcome::Failed => format!("`{text}` (failed)"),
            Outcome::Fixed => format!("`{text}` (failed, then passed)"),
        })
        .collect();
    sentences(&[("Read", &digest.files_read), ("Ran", &commands)])
}

/// The errors seen, and which commands were fixed.
fn learned(digest: &Digest) -> String {
    let fixed: Vec<String> = digest.fixed_commands().iter().map(|c| format!("`{c}`")).collect();
    let mut out = sentences(&[("Errors seen", &digest.errors)]);
    if !fixed.is_empty() {
        let line = format!(
            "Passing again after failing: {}.",
            join_capped(&fixed, MAX_LISTED)
        );
        out = if out.is_empty() {
            line
        } else {
            format!("{out} {line}")
        };
    }
    out
}

/// `Modified: a, b.`
fn completed(digest: &Digest) -> String {
    sentences(&[("Modified", &digest.files_modified)])
}

/// Lines of the last message that mention a next step or a TODO.
fn next_steps(last_message: Option<&str>) -> String {
    let steps: Vec<&str> = last_message
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', '•']).trim())
        .filter(|l| {
            let lower = l.to_lowercase();
            lower.contains("next") || lower.contains("todo")
        })
        .take(MAX_NEXT_STEPS)
        .collect();
    steps.join("\n")
}

/// `Label: a, b. Other: c.` for the non-empty lists.
fn sentences(parts: &[(&str, &Vec<String>)]) -> String {
    let written: Vec<String> = parts
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(label, list)| format!("{label}: {}.", join_capped(list, MAX_LISTED)))
        .collect();
    written.join(" ")
}
