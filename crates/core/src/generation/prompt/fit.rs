//! Fitting a prompt's items (events, turns) into the total budget: whole items
//! are left out, from the middle or the oldest first, with a line saying how
//! many; the result never exceeds the budget.

use super::elide::elide;

/// Which items stay when they do not all fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The first and the last, then inwards from both ends; the middle goes.
    Ends,
    /// The newest (last), then backwards; the oldest go.
    Newest,
}

/// A prompt as fixed text around a list of items.
pub(crate) struct Layout {
    /// Text before the items (kept whole when the budget allows).
    pub head: String,
    pub items: Vec<String>,
    /// Between two items.
    pub separator: &'static str,
    /// Text after the items.
    pub tail: String,
    /// What the items are, plural (`events`, `turns`), for the omission line.
    pub noun: &'static str,
}

/// Joins the layout within `total` characters, leaving items out as `keep`
/// says when they do not all fit. Items that must stay (the ends, or the
/// newest) are elided to their share of the budget; if even the fixed text
/// is too long, the whole is elided, so the result is at most `total` characters.
pub(crate) fn fit(layout: Layout, total: usize, keep: Keep) -> String {
    let whole = join(&layout, &layout.items, layout.items.len(), None);
    if chars(&whole) <= total {
        return whole;
    }
    let sep = chars(layout.separator);
    let fixed = chars(&layout.head) + chars(&layout.tail) + chars(&omitted(&layout, keep, usize::MAX)) + sep;
    let budget = total.saturating_sub(fixed);
    let items = shrink_kept(&layout.items, budget, sep, keep);
    let sizes: Vec<usize> = items.iter().map(|i| chars(i) + sep).collect();
    let (front, back) = choose(&sizes, budget, keep);
    let left_out = items.len() - front - back;
    let line = (left_out > 0).then(|| omitted(&layout, keep, left_out));
    let kept: Vec<String> = items[..front]
        .iter()
        .chain(&items[items.len() - back..])
        .cloned()
        .collect();
    elide(&join(&layout, &kept, front, line.as_deref()), total).into_owned()
}

/// Elides the items that must stay to their share of `budget`: for `Ends`
/// the first gets half and the last the rest; for `Newest` the last gets it all.
fn shrink_kept(items: &[String], budget: usize, sep: usize, keep: Keep) -> Vec<String> {
    let mut items = items.to_vec();
    let n = items.len();
    let mut left = budget;
    if keep == Keep::Ends && n >= 2 {
        items[0] = elide(&items[0], (budget / 2).saturating_sub(sep)).into_owned();
        left = budget.saturating_sub(chars(&items[0]) + sep);
    }
    if let Some(last) = items.last_mut() {
        *last = elide(last, left.saturating_sub(sep)).into_owned();
    }
    items
}

/// How many items to keep from the front and from the back, taking them
/// alternately (front first) while they fit; a side stops at its first misfit.
fn choose(sizes: &[usize], budget: usize, keep: Keep) -> (usize, usize) {
    let n = sizes.len();
    let (mut front, mut back, mut used) = (0, 0, 0);
    let (mut front_open, mut back_open) = (keep == Keep::Ends, true);
    while front + back < n && (front_open || back_open) {
        let from_front = front_open && (front <= back || !back_open);
        let size = if from_front {
            sizes[front]
        } else {
            sizes[n - 1 - back]
        };
        if used + size > budget {
            if from_front {
                front_open = false;
            } else {
                back_open = false;
            }
            continue;
        }
        used += size;
        if from_front {
            front += 1;
        } else {
            back += 1;
        }
    }
    (front, back)
}

/// The line standing for `count` left-out items.
fn omitted(layout: &Layout, keep: Keep, count: usize) -> String {
    let place = match keep {
        Keep::Ends => "from the middle",
        Keep::Newest => "(the oldest)",
    };
    format!("[… {count} {} {place} left out to fit the budget …]", layout.noun)
}

/// Head, the items with the omission line (if any) after the first `split`, tail.
fn join(layout: &Layout, items: &[String], split: usize, line: Option<&str>) -> String {
    let mut parts: Vec<&str> = items.iter().map(String::as_str).collect();
    if let Some(line) = line {
        parts.insert(split.min(parts.len()), line);
    }
    format!("{}{}{}", layout.head, parts.join(layout.separator), layout.tail)
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(items: Vec<String>) -> Layout {
        Layout {
            head: "HEAD\n".into(),
            items,
            separator: "\n\n",
            tail: "\nTAIL".into(),
            noun: "events",
        }
    }

    fn numbered(n: usize, size: usize) -> Vec<String> {
        (0..n).map(|i| format!("item {i} {}", "x".repeat(size))).collect()
    }

    #[test]
    fn everything_fits_unchanged() {
        let out = fit(layout(vec!["a".into(), "b".into()]), 1_000, Keep::Ends);
        assert_eq!(out, "HEAD\na\n\nb\nTAIL");
    }

    #[test]
    fn ends_keep_first_and_last_and_count_the_middle() {
        let out = fit(layout(numbered(100, 90)), 1_000, Keep::Ends);
        assert!(out.chars().count() <= 1_000, "{}", out.len());
        assert!(out.contains("item 0 ") && out.contains("item 99 "), "{out}");
        assert!(out.starts_with("HEAD\n") && out.ends_with("\nTAIL"));
        let kept = out.matches("item ").count();
        assert!(
            out.contains(&format!("[… {} events from the middle left out", 100 - kept)),
            "{out}"
        );
    }

    #[test]
    fn newest_keeps_the_last_items() {
        let out = fit(layout(numbered(50, 90)), 700, Keep::Newest);
        assert!(out.chars().count() <= 700);
        assert!(out.contains("item 49 ") && !out.contains("item 0 "), "{out}");
        assert!(out.contains("events (the oldest) left out"), "{out}");
    }

    #[test]
    fn huge_items_and_huge_head_stay_within_budget() {
        let huge = vec!["a".repeat(100_000), "b".repeat(100_000), "c".repeat(100_000)];
        let out = fit(layout(huge), 2_000, Keep::Ends);
        assert!(out.chars().count() <= 2_000 && out.contains('a') && out.contains('c'));
        let mut big_head = layout(numbered(3, 10));
        big_head.head = "h".repeat(10_000);
        assert!(fit(big_head, 500, Keep::Newest).chars().count() <= 500);
        assert!(fit(layout(numbered(3, 10)), 0, Keep::Ends).is_empty());
    }
}
