//! The user part of an observation job: who and where, the turn's prompt,
//! then every event as a block; the middle events go first when over budget.

use super::fit::{Keep, Layout, fit};
use super::render::render_event;
use super::{Budget, header, optional, payload};
use crate::material::Material;

/// The observation prompt for `material` within `budget`.
pub(crate) fn build(material: &Material, budget: &Budget) -> String {
    let found = material
        .events
        .iter()
        .enumerate()
        .find_map(|(i, e)| Some((i, payload::prompt(e)?)));
    let (prompt_at, prompt) = (found.map(|(i, _)| i), found.map(|(_, p)| p));
    let items: Vec<String> = material
        .events
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != prompt_at)
        .enumerate()
        .map(|(n, (_, event))| render_event(n + 1, event, budget.per_event_chars))
        .collect();
    let mut head = header("observations for one agent turn", material);
    head.push_str("\n## User prompt\n");
    head.push_str(&optional(prompt, budget.per_event_chars));
    head.push_str(&format!("\n\n## Events ({})\n\n", items.len()));
    let layout = Layout {
        head,
        items,
        separator: "\n\n",
        tail: "\n\nWrite the observations worth keeping from this turn.\n".into(),
        noun: "events",
    };
    fit(layout, budget.total_chars, Keep::Ends)
}
