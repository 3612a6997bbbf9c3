//! The user part of summary jobs. A turn: its prompt, one brief line per
//! tool call, the agent's last message. A session: one block per turn,
//! oldest first (the turn's own summary when it has one, else a digest of
//! its events), the oldest turns dropped first when over budget.

use super::digest::{Digest, split_turns};
use super::elide::{elide, join_capped};
use super::fit::{Keep, Layout, fit};
use super::render::render_brief;
use super::{Budget, TurnSummary, header, optional, payload};
use crate::generation::material::Material;

/// Most files or commands listed per turn of a session.
const MAX_LISTED: usize = 20;
/// A session's per-turn texts get this fraction of `per_event_chars`, so that
/// more turns fit.
const SESSION_FIELD_DIVISOR: usize = 4;
/// ... but never less than this many characters.
const SESSION_FIELD_MIN: usize = 200;

/// The turn-summary prompt for `material` within `budget`.
pub(crate) fn turn(material: &Material, budget: &Budget) -> String {
    let digest = Digest::of(&material.events);
    let mut items: Vec<String> = material
        .events
        .iter()
        .filter(|e| payload::is_tool_outcome(e))
        .map(render_brief)
        .collect();
    if items.is_empty() {
        items.push("(no tool calls)".into());
    }
    let mut head = header("summary of one agent turn", material);
    head.push_str("\n## User prompt\n");
    head.push_str(&optional(digest.prompt(), budget.per_event_chars));
    head.push_str(&format!(
        "\n\n## Tool activity ({} tool events)\n",
        digest.tool_events
    ));
    let mut tail = String::from("\n\n## Last assistant message\n");
    tail.push_str(&optional(digest.last_message.as_deref(), budget.per_event_chars));
    tail.push_str("\n\nWrite the summary of this turn.\n");
    let layout = Layout {
        head,
        items,
        separator: "\n",
        tail,
        noun: "tool events",
    };
    fit(layout, budget.total_chars, Keep::Ends)
}

/// The session-summary prompt for `material` within `budget`: each turn
/// as its summary from `summaries` when there is one, else as the digest
/// of its events.
pub(crate) fn session(material: &Material, budget: &Budget, summaries: &[TurnSummary]) -> String {
    let field_chars = (budget.per_event_chars / SESSION_FIELD_DIVISOR).max(SESSION_FIELD_MIN);
    let mut turns: Vec<(i64, String)> = split_turns(&material.events)
        .iter()
        .enumerate()
        .map(|(i, events)| {
            let digest = Digest::of(events);
            let number = digest.prompt_number.map_or(i as i64 + 1, i64::from);
            match summaries.iter().find(|s| i64::from(s.prompt_number) == number) {
                Some(summary) => (number, render_summary(summary, field_chars)),
                None => (number, render_turn(i + 1, &digest, field_chars)),
            }
        })
        .collect();
    for summary in summaries {
        let number = i64::from(summary.prompt_number);
        if !turns.iter().any(|(n, _)| *n == number) {
            turns.push((number, render_summary(summary, field_chars)));
        }
    }
    turns.sort_by_key(|(n, _)| *n);
    let items: Vec<String> = turns.into_iter().map(|(_, text)| text).collect();
    let mut head = header("summary of a whole session", material);
    head.push_str(&format!("Turns: {}\n\n", items.len()));
    let layout = Layout {
        head,
        items,
        separator: "\n\n",
        tail: "\n\nWrite the summary of this session.\n".into(),
        noun: "turns",
    };
    fit(layout, budget.total_chars, Keep::Newest)
}

/// One turn of a session from its summary: the fields that have text.
fn render_summary(summary: &TurnSummary, field_chars: usize) -> String {
    let mut out = format!("### Turn {} (its summary)", summary.prompt_number);
    for (label, text) in [
        ("request", &summary.request),
        ("investigated", &summary.investigated),
        ("learned", &summary.learned),
        ("completed", &summary.completed),
        ("next steps", &summary.next_steps),
        ("notes", &summary.notes),
    ] {
        if !text.trim().is_empty() {
            out.push_str(&format!("\n{label}: {}", elide(text.trim(), field_chars)));
        }
    }
    out
}

/// One turn of a session: prompt, tool counts, files, failed commands, last message.
fn render_turn(ordinal: usize, digest: &Digest, field_chars: usize) -> String {
    let number = digest.prompt_number.map_or(ordinal as i64, i64::from);
    let mut out = format!(
        "### Turn {number}\nprompt: {}",
        optional(digest.prompt(), field_chars)
    );
    let counts: Vec<String> = digest
        .tool_counts
        .iter()
        .map(|(tool, n)| format!("{tool}: {n}"))
        .collect();
    let failed: Vec<String> = digest
        .commands
        .iter()
        .filter(|c| c.failed)
        .map(|c| elide(&c.text, field_chars).into_owned())
        .collect();
    for (label, list) in [
        ("tools", &counts),
        ("files read", &digest.files_read),
        ("files modified", &digest.files_modified),
        ("failed commands", &failed),
    ] {
        if !list.is_empty() {
            out.push_str(&format!(
                "\n{label}: {}",
                elide(&join_capped(list, MAX_LISTED), field_chars)
            ));
        }
    }
    out.push_str("\nlast assistant message: ");
    out.push_str(&optional(digest.last_message.as_deref(), field_chars));
    out
}
