//! Shortening text to a budget counted in characters (Unicode scalar values),
//! never splitting a character: head and tail kept, the middle replaced by a
//! marker; lines and lists cut short.

use std::borrow::Cow;

/// Shortens `text` to at most `max_chars` characters by keeping its head and
/// tail and replacing the middle with `…[N chars elided]…`.
///
/// Text that fits is returned as is. When `max_chars` is too small to hold the
/// marker, the head alone is kept, ending with `…`.
pub fn elide(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = text.chars().count();
    if total <= max_chars {
        return Cow::Borrowed(text);
    }
    // The marker names at most `total` elided chars, so its length with that
    // many digits is an upper bound: the result never exceeds `max_chars`.
    let marker_bound = marker(total).chars().count();
    if max_chars < marker_bound + 2 {
        return Cow::Owned(truncate(text, max_chars).into_owned());
    }
    let keep = max_chars - marker_bound;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out = String::with_capacity(max_chars * 4);
    out.push_str(prefix(text, head));
    out.push_str(&marker(total - keep));
    out.push_str(suffix(text, tail));
    Cow::Owned(out)
}

/// Cuts `text` to at most `max_chars` characters, ending with `…` when it was cut.
pub fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.chars().count() <= max_chars {
        return Cow::Borrowed(text);
    }
    if max_chars == 0 {
        return Cow::Borrowed("");
    }
    let mut out = prefix(text, max_chars - 1).to_string();
    out.push('…');
    Cow::Owned(out)
}

/// The first non-blank line of `text`, trimmed and cut to `max_chars`.
pub fn first_line(text: &str, max_chars: usize) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(truncate(line, max_chars).into_owned())
}

/// Joins at most `max_items` items with `, `, then `(+N more)` for the rest.
pub fn join_capped(items: &[String], max_items: usize) -> String {
    join_capped_with(items, max_items, ", ")
}

/// [`join_capped`] with another separator.
pub fn join_capped_with(items: &[String], max_items: usize, separator: &str) -> String {
    let mut out = items
        .iter()
        .take(max_items)
        .cloned()
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > max_items {
        out.push_str(&format!(" (+{} more)", items.len() - max_items));
    }
    out
}

/// The marker standing for `elided` characters.
fn marker(elided: usize) -> String {
    format!("…[{elided} chars elided]…")
}

/// The first `chars` characters of `text`.
fn prefix(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The last `chars` characters of `text`.
fn suffix(text: &str, chars: usize) -> &str {
    if chars == 0 {
        return "";
    }
    match text.char_indices().nth_back(chars - 1) {
        Some((at, _)) => &text[at..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_borrowed_unchanged() {
        assert!(matches!(elide("hello", 5), Cow::Borrowed("hello")));
    }

    #[test]
    fn elision_keeps_head_and_tail_and_names_the_count() {
        let text = format!("HEAD{}TAIL", "x".repeat(10_000));
        let out = elide(&text, 100);
        assert!(out.chars().count() <= 100, "{}", out.chars().count());
        assert!(out.starts_with("HEAD") && out.ends_with("TAIL"), "{out}");
        let named: usize = out
            .split("…[")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        let kept = out.chars().count() - marker(named).chars().count();
        assert_eq!(kept + named, text.chars().count());
    }

    #[test]
    fn elision_is_char_boundary_safe_on_multibyte_text() {
        let text = "é🦀中".repeat(500);
        for max in [0, 1, 5, 20, 27, 28, 100, 999] {
            let out = elide(&text, max);
            assert!(out.chars().count() <= max, "max {max}: {}", out.chars().count());
            if max >= 40 {
                assert!(out.starts_with("é🦀中") && out.ends_with("é🦀中"), "{out}");
            }
        }
    }

    #[test]
    fn truncate_and_first_line() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("ab", 4), "ab");
        assert_eq!(truncate("ab", 0), "");
        assert_eq!(
            first_line("\n  \n  fix it  \nmore", 80).as_deref(),
            Some("fix it")
        );
        assert_eq!(first_line("   ", 80), None);
        let items: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(join_capped(&items, 2), "a, b (+1 more)");
        assert_eq!(join_capped(&items, 3), "a, b, c");
    }
}
