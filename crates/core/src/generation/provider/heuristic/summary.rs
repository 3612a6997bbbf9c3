//! A `<summary>` from the digest of a turn or a session.

use super::xml::Element;
use crate::generation::prompt::digest::{Digest, Outcome};
use crate::generation::prompt::elide::{elide, join_capped, join_capped_with};

/// Longest prompt kept in `request`, in characters.
const PROMPT_CHARS: usize = 2_000;
/// Most files or commands listed per field.
const MAX_LISTED: usize = 20;
/// Most next steps taken from the last message.
const MAX_NEXT_STEPS: usize = 5;
/// Longest final message kept in a turn summary's `completed`, in characters.
const FINAL_CHARS: usize = 1_500;
/// A session summary keeps the final messages of its last turns only…
const MAX_FINALS: usize = 5;
/// …each cut to this many characters.
const SESSION_FINAL_CHARS: usize = 500;

/// What a summary is written from.
pub(super) struct Facts<'a> {
    pub digest: &'a Digest,
    /// The files read and not also modified (those are named once, as
    /// modified), relative to the repository.
    pub read_only: Vec<String>,
    /// The files modified, relative to the repository.
    pub modified: Vec<String>,
    /// The agent's final message of the turn, or of each turn of a session, in order.
    pub finals: &'a [&'a str],
}

/// The summary, as XML.
pub(super) fn render(facts: &Facts<'_>) -> String {
    let digest = facts.digest;
    Element::new("summary")
        .text("request", &request(digest))
        .text("investigated", &investigated(digest, &facts.read_only))
        .text("learned", &learned(digest))
        .text("completed", &completed(facts.finals, &facts.modified))
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

/// `Read: a; b. Ran: cargo test (failed, then passed).`
fn investigated(digest: &Digest, read_only: &[String]) -> String {
    let commands: Vec<String> = digest
        .command_outcomes()
        .into_iter()
        .map(|(text, outcome)| match outcome {
            Outcome::Passed => format!("`{text}`"),
            Outcome::Failed => format!("`{text}` (failed)"),
            Outcome::Fixed => format!("`{text}` (failed, then passed)"),
        })
        .collect();
    sentences(&[("Read", read_only), ("Ran", &commands)])
}

/// The errors seen, the lines read or printed that the turn spoke of, and
/// which commands were fixed.
fn learned(digest: &Digest) -> String {
    let fixed: Vec<String> = digest.fixed_commands().iter().map(|c| format!("`{c}`")).collect();
    let mut out = sentences(&[
        ("Errors seen", &digest.errors),
        ("Noted in what was read and run", &digest.noted),
    ]);
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

/// The agent's final message (its next steps left to `next_steps`), then
/// `Modified: a, b.`. A session gives the final messages of its last
/// [`MAX_FINALS`] turns, one per line, each cut shorter.
fn completed(finals: &[&str], modified: &[String]) -> String {
    let said: Vec<String> = match finals {
        [] => Vec::new(),
        [only] => vec![elide(&without_next_steps(only), FINAL_CHARS).into_owned()],
        _ => {
            let skipped = finals.len().saturating_sub(MAX_FINALS);
            let mut said: Vec<String> = finals[skipped..]
                .iter()
                .map(|m| {
                    let one_line = without_next_steps(m).replace('\n', " ");
                    elide(&one_line, SESSION_FINAL_CHARS).into_owned()
                })
                .filter(|m| !m.is_empty())
                .collect();
            if skipped > 0 && !said.is_empty() {
                said.insert(0, format!("(final messages of {skipped} earlier turns left out)"));
            }
            said
        }
    };
    let modified = sentences(&[("Modified", modified)]);
    said.into_iter()
        .chain(Some(modified))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The message's non-blank lines, trimmed, without those that name a next step.
fn without_next_steps(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_next_step(unbullet(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines of the last message that mention a next step or a TODO.
fn next_steps(last_message: Option<&str>) -> String {
    let steps: Vec<&str> = last_message
        .unwrap_or_default()
        .lines()
        .map(unbullet)
        .filter(|l| is_next_step(l))
        .take(MAX_NEXT_STEPS)
        .collect();
    steps.join("\n")
}

/// The line without surrounding blanks and a leading list bullet.
fn unbullet(line: &str) -> &str {
    line.trim().trim_start_matches(['-', '*', '•']).trim()
}

fn is_next_step(line: &str) -> bool {
    let lower = line.to_lowercase();
    lower.contains("next") || lower.contains("todo")
}

/// `Label: a, b. Other: c.` for the non-empty lists.
fn sentences(parts: &[(&str, &[String])]) -> String {
    let written: Vec<String> = parts
        .iter()
        .filter(|(_, list)| !list.is_empty())
        // `; ` between items: an error or a line noted holds commas of its
        // own, and a prompt's context shows the items its words are in.
        .map(|(label, list)| format!("{label}: {}.", join_capped_with(list, MAX_LISTED, "; ")))
        .collect();
    written.join(" ")
}
