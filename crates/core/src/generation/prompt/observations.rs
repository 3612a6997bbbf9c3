//! The user part of an observation job: who and where, the turn's prompt,
//! then each tool event condensed (`condense`), routine ones named in one
//! line (`routine`); the middle events go first when over budget. A job that
//! ends its turn also gets the agent's last message and is asked for the
//! turn's summary.

use super::condense::{Pointers, condense};
use super::fit::{Keep, Layout, fit};
use super::render::render_event;
use super::{Budget, header, optional, payload, routine};
use crate::generation::material::{EventRecord, Material};

/// The observation prompt for `material` within `budget`; with
/// `summarise_turn`, also the last message and the summary request.
pub(crate) fn build(material: &Material, budget: &Budget, summarise_turn: bool) -> String {
    let prompt = material.events.iter().find_map(payload::prompt);
    let last_message = material
        .events
        .iter()
        .rev()
        .find_map(payload::last_assistant_message);
    let rest: Vec<&EventRecord> = material
        .events
        .iter()
        .filter(|e| payload::prompt(e).is_none())
        .filter(|e| !summarise_turn || payload::last_assistant_message(e).is_none())
        .collect();
    let (kept, left_out) = routine::split(&rest);
    let pointers = Pointers::of(&material.events);
    let cwd = material.cwd.as_deref();
    let items: Vec<String> = kept
        .iter()
        .enumerate()
        .map(|(n, event)| {
            if payload::is_tool_outcome(event) {
                condense(n + 1, event, &pointers, cwd)
            } else {
                render_event(n + 1, event, budget.per_event_chars / 4)
            }
        })
        .collect();
    let kind = if summarise_turn {
        "observations and summary of one agent turn"
    } else {
        "observations for one agent turn"
    };
    let mut head = header(kind, material);
    head.push_str("\n## User prompt\n");
    head.push_str(&optional(prompt, budget.per_event_chars));
    head.push_str(&format!("\n\n## Events ({})\n", items.len()));
    if !left_out.is_empty() {
        head.push_str(&format!("(left out as routine: {})\n", left_out.join("; ")));
    }
    head.push('\n');
    let tail = if summarise_turn {
        format!(
            "\n\n## Last assistant message\n{}\n\nWrite the observations worth keeping, then the turn's summary.\n",
            optional(last_message, budget.per_event_chars)
        )
    } else {
        "\n\nWrite the observations worth keeping from this turn.\n".into()
    };
    let layout = Layout {
        head,
        items,
        separator: "\n\n",
        tail,
        noun: "events",
    };
    fit(layout, budget.total_chars, Keep::Ends)
}
