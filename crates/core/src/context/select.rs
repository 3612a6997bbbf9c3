//! Fits a context to its token budget. Pieces are taken in priority order —
//! the newest summary (cut if it must be), the newest plans in full (`PLANS`,
//! under their own heading), the relevant observations in full, older summaries,
//! then the index of recent observations, newest first —
//! each only if its price (its rendered length) still fits. The budget is
//! never a row count, and never exceeded.

use std::collections::HashSet;

use uuid::Uuid;

use super::{
    gather::{COUNT_CAP, Candidates, ObservationItem, SummaryItem},
    markdown,
};

/// What made it in, in render order.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub summaries: Vec<SummaryItem>,
    /// The newest plans (kind `plan`), under "Plans".
    pub plans: Vec<ObservationItem>,
    pub index: Vec<ObservationItem>,
    pub details: Vec<ObservationItem>,
    /// Observations of the project not shown (index or detail).
    pub omitted: i64,
    pub omitted_capped: bool,
    pub markdown: String,
}

/// Plans shown under their own heading, at most: the newest.
pub const PLANS: usize = 2;

/// Characters left, in the budget's unit.
struct Purse {
    left: usize,
}

impl Purse {
    fn take(&mut self, piece: &str) -> bool {
        let price = piece.chars().count();
        if price <= self.left {
            self.left -= price;
            true
        } else {
            false
        }
    }
}

/// Observations in full under `title` (priced only if one fits), each cut
/// to `cap` characters, until one no longer fits.
fn blocks<'a>(
    purse: &mut Purse,
    title: &str,
    items: impl Iterator<Item = &'a ObservationItem>,
    cap: usize,
) -> Vec<(ObservationItem, String)> {
    let mut taken = Vec::new();
    for o in items {
        let title_cost = if taken.is_empty() {
            title.chars().count()
        } else {
            0
        };
        let block = markdown::detail(o, cap.min(purse.left.saturating_sub(title_cost)));
        if block.lines().count() < 2 || title_cost + block.chars().count() > purse.left {
            break;
        }
        if taken.is_empty() {
            purse.take(title);
        }
        purse.take(&block);
        taken.push((o.clone(), block));
    }
    taken
}

/// What a summary says, field by field, without its time and scope.
fn gist(s: &SummaryItem) -> [String; 4] {
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    [
        words(&s.request),
        words(&s.completed),
        words(&s.learned),
        words(&s.next_steps),
    ]
}

/// Whether `a` says nothing `b` does not: each of its fields is empty or
/// the same as `b`'s.
fn says_no_more(a: &[String; 4], b: &[String; 4]) -> bool {
    a.iter().zip(b).all(|(a, b)| a.is_empty() || a == b)
}

/// Each thing once: a summary is left out when another says all it says
/// (a one-turn session's session summary and its turn summary; a repeat);
/// of two saying the same, the newer stays.
fn said_once(summaries: &[SummaryItem]) -> Vec<&SummaryItem> {
    let gists: Vec<[String; 4]> = summaries.iter().map(gist).collect();
    summaries
        .iter()
        .enumerate()
        .filter(|&(i, _)| {
            !gists.iter().enumerate().any(|(j, other)| {
                j != i && says_no_more(&gists[i], other) && (j < i || !says_no_more(other, &gists[i]))
            })
        })
        .map(|(_, s)| s)
        .collect()
}

/// `max_details` caps the full-detail observations (a resume gets none).
pub fn select(project: &str, c: &Candidates, budget_tokens: usize, max_details: usize) -> Selection {
    let budget_chars = budget_tokens * 4;
    let header = markdown::header(project);
    // The footer is priced at its longest: every observation omitted.
    let footer_reserve = markdown::footer(c.total_observations, true);
    let mut purse = Purse {
        left: budget_chars
            .saturating_sub(markdown::OPEN_TAG.len() + markdown::CLOSE_TAG.len())
            .saturating_sub(header.chars().count() + footer_reserve.chars().count()),
    };
    if c.summaries.is_empty() && c.recent.is_empty() {
        let body = format!(
            "{}{header}{}{}",
            markdown::OPEN_TAG,
            markdown::empty_note(),
            markdown::CLOSE_TAG
        );
        return Selection {
            markdown: body,
            ..Selection::default()
        };
    }

    let work = markdown::section("Recent work");
    let candidates = said_once(&c.summaries);
    let mut summaries = Vec::new();
    if let Some(newest) = candidates.first() {
        // The newest summary always goes in, cut to what is left.
        if purse.take(&work) {
            let line = markdown::summary_line(newest, purse.left);
            purse.take(&line);
            summaries.push(((*newest).clone(), line));
        }
    }

    let detail_cap = budget_chars / 4;
    // Plans come right after the newest summary: the work in hand, in the plan's own words.
    let plans_title = markdown::section("Plans");
    let newest_plans = c.recent.iter().filter(|o| o.kind == "plan").take(PLANS);
    let plans = blocks(&mut purse, &plans_title, newest_plans, detail_cap);
    let details_title = markdown::section("In detail");
    let relevant = c.relevant.iter().filter(|o| o.kind != "plan").take(max_details);
    let details = blocks(&mut purse, &details_title, relevant, detail_cap);

    for s in candidates.iter().skip(1) {
        let line = markdown::summary_line(s, usize::MAX);
        if !purse.take(&line) {
            break;
        }
        summaries.push(((*s).clone(), line));
    }

    let shown: HashSet<Uuid> = details.iter().chain(&plans).map(|(o, _)| o.id).collect();
    let index_title = markdown::section("Recent observations");
    let mut index: Vec<(ObservationItem, String)> = Vec::new();
    let mut last_day = None;
    for o in c.recent.iter().filter(|o| !shown.contains(&o.id)) {
        let day = o.created_at.date_naive();
        let mut piece = String::new();
        if index.is_empty() {
            piece.push_str(&index_title);
        }
        if last_day != Some(day) {
            piece.push_str(&markdown::day(o.created_at));
        }
        piece.push_str(&markdown::index_line(o));
        if !purse.take(&piece) {
            break;
        }
        last_day = Some(day);
        index.push((o.clone(), piece));
    }

    let omitted = (c.total_observations - (index.len() + details.len() + plans.len()) as i64).max(0);
    let capped = c.total_observations >= COUNT_CAP;
    let mut out = String::with_capacity(budget_chars);
    out.push_str(markdown::OPEN_TAG);
    out.push_str(&header);
    if !summaries.is_empty() {
        out.push_str(&work);
    }
    for (_, line) in &summaries {
        out.push_str(line);
    }
    for (i, (_, block)) in plans.iter().enumerate() {
        if i == 0 {
            out.push_str(&plans_title);
        }
        out.push_str(block);
    }
    for (_, piece) in &index {
        out.push_str(piece);
    }
    for (i, (_, block)) in details.iter().enumerate() {
        if i == 0 {
            out.push_str(&details_title);
        }
        out.push_str(block);
    }
    out.push_str(&markdown::footer(omitted, capped));
    out.push_str(markdown::CLOSE_TAG);
    Selection {
        summaries: summaries.into_iter().map(|(s, _)| s).collect(),
        plans: plans.into_iter().map(|(o, _)| o).collect(),
        index: index.into_iter().map(|(o, _)| o).collect(),
        details: details.into_iter().map(|(o, _)| o).collect(),
        omitted,
        omitted_capped: capped,
        markdown: out,
    }
}
