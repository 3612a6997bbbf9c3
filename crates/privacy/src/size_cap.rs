//! Size cap: an over-long string keeps a head and a tail around an elision marker line.
//!
//! The whole result, marker included, fits in the budget, so capping an
//! already capped string changes nothing. About 60% of the remaining budget
//! goes to the head and 40% to the tail. Cuts fall on UTF-8 boundaries and,
//! when one is near (within [`SNAP_WINDOW`] bytes), on a line break or a
//! space, and never inside a `[REDACTED:kind]` marker, so a cut never turns
//! a harmless fragment into something the secret rules would match later.

use super::redactor::MARKER_PREFIX;

const MARKER_OPEN: &str = "\n…[cairn: elided ";
const MARKER_CLOSE: &str = " bytes]…\n";
const SNAP_WINDOW: usize = 256;
const MARKER: &[u8] = MARKER_PREFIX.as_bytes();
/// Below marker size plus this, the head alone is kept, without a marker.
const MIN_KEPT: usize = 16;

/// The capped text and the number of bytes cut, or `None` when `text` fits.
pub(super) fn cap(text: &str, max_bytes: usize) -> Option<(String, u64)> {
    if text.len() <= max_bytes {
        return None;
    }
    let reserve = MARKER_OPEN.len() + MARKER_CLOSE.len() + digits(text.len());
    if max_bytes < reserve + MIN_KEPT {
        let end = snap_head(text, floor_boundary(text, max_bytes));
        return Some((text[..end].to_owned(), (text.len() - end) as u64));
    }
    let keep = max_bytes - reserve;
    let head_budget = keep * 3 / 5;
    let tail_budget = keep - head_budget;
    let head_end = snap_head(text, floor_boundary(text, head_budget));
    let tail_start = snap_tail(text, ceil_boundary(text, text.len() - tail_budget));
    let elided = tail_start - head_end;
    let mut out = String::with_capacity(max_bytes);
    out.push_str(&text[..head_end]);
    out.push_str(MARKER_OPEN);
    out.push_str(&elided.to_string());
    out.push_str(MARKER_CLOSE);
    out.push_str(&text[tail_start..]);
    Some((out, elided as u64))
}

fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

fn is_space(b: &u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Moves a head end back to a line break or space (dropped), or out of a marker.
fn snap_head(text: &str, end: usize) -> usize {
    let bytes = text.as_bytes();
    let from = end.saturating_sub(SNAP_WINDOW);
    let window = &bytes[from..end];
    if let Some(i) = window.iter().rposition(|b| *b == b'\n') {
        return from + i;
    }
    if let Some(i) = window.iter().rposition(is_space) {
        return from + i;
    }
    match window.iter().rposition(|b| *b == b'[') {
        Some(i) if !window[i..].contains(&b']') && bytes[from + i..].starts_with(MARKER) => from + i,
        _ => end,
    }
}

/// Moves a tail start forward past a line break or space (dropped), or out of a marker.
fn snap_tail(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let to = (start + SNAP_WINDOW).min(bytes.len());
    let window = &bytes[start..to];
    if let Some(i) = window.iter().position(|b| *b == b'\n') {
        return start + i + 1;
    }
    if let Some(i) = window.iter().position(is_space) {
        return start + i + 1;
    }
    let back = start.saturating_sub(SNAP_WINDOW);
    let inside_marker = bytes[back..start]
        .iter()
        .rposition(|b| *b == b'[')
        .is_some_and(|i| !bytes[back + i..start].contains(&b']') && bytes[back + i..].starts_with(MARKER));
    match window.iter().position(|b| *b == b']') {
        Some(close) if inside_marker => start + close + 1,
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker_of(out: &str) -> Option<&str> {
        let start = out.find(MARKER_OPEN)?;
        let end = out[start..].find(MARKER_CLOSE)? + start + MARKER_CLOSE.len();
        Some(&out[start..end])
    }

    #[test]
    fn at_or_under_budget_is_unchanged() {
        let text = "a".repeat(100);
        assert_eq!(cap(&text, 100), None);
        assert_eq!(cap(&text, 1000), None);
        assert_eq!(cap("", 0), None);
    }

    #[test]
    fn one_byte_over_budget_is_capped_within_budget() {
        let text = "a".repeat(101);
        let (out, elided) = cap(&text, 100).expect("capped");
        assert!(out.len() <= 100, "{} bytes", out.len());
        let marker = marker_of(&out).expect("marker");
        assert_eq!(marker, format!("\n…[cairn: elided {elided} bytes]…\n"));
        assert_eq!(out.len() - marker.len() + elided as usize, text.len());
    }

    #[test]
    fn keeps_about_sixty_percent_head_and_forty_percent_tail() {
        let text: String = (0..100_000u32)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let (out, elided) = cap(&text, 10_000).expect("capped");
        assert!(out.len() <= 10_000);
        let start = out.find(MARKER_OPEN).expect("marker");
        let head = &out[..start];
        let tail = &out[start + marker_of(&out).map_or(0, str::len)..];
        assert!(text.starts_with(head));
        assert!(text.ends_with(tail));
        let kept = (head.len() + tail.len()) as f64;
        assert!((head.len() as f64 / kept - 0.6).abs() < 0.01);
        assert_eq!(head.len() + tail.len() + elided as usize, text.len());
        assert!(out.len() > 9_950, "budget mostly used: {}", out.len());
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        for unit in ["é", "日", "🦀", "a🦀é日"] {
            let text = unit.repeat(5_000);
            for max in [0, 1, 2, 3, 5, 17, 40, 41, 42, 43, 100, 101, 1_001, 4_097] {
                let (out, elided) = cap(&text, max).expect("capped");
                assert!(out.len() <= max, "{unit} {max}: {}", out.len());
                assert!(elided > 0);
                // `out` is a String, so it is valid UTF-8; make sure no char was split.
                assert!(
                    out.chars()
                        .filter(|c| !c.is_ascii() && *c != '…')
                        .all(|c| unit.contains(c))
                );
            }
        }
    }

    #[test]
    fn cuts_snap_to_line_breaks() {
        let text: String = (0..2_000).map(|i| format!("line {i:04} of the log\n")).collect();
        let (out, _) = cap(&text, 2_000).expect("capped");
        let start = out.find(MARKER_OPEN).expect("marker");
        let head = &out[..start];
        let tail = &out[start + marker_of(&out).map_or(0, str::len)..];
        assert!(head.ends_with("of the log"), "{head:?}");
        assert!(tail.starts_with("line "), "{tail:?}");
    }

    #[test]
    fn cuts_never_split_a_redaction_marker() {
        let text = "[REDACTED:github_token]".repeat(1_000);
        for max in [100, 333, 1_000, 2_047] {
            let (out, _) = cap(&text, max).expect("capped");
            let start = out.find(MARKER_OPEN).expect("marker");
            let head = &out[..start];
            let tail = &out[start + marker_of(&out).map_or(0, str::len)..];
            assert!(head.is_empty() || head.ends_with(']'), "{head:?}");
            assert!(tail.is_empty() || tail.starts_with("[REDACTED:"), "{tail:?}");
        }
    }

    #[test]
    fn tiny_budgets_keep_only_the_head() {
        let text = "abcdefghijklmnopqrstuvwxyz".repeat(4);
        let (out, elided) = cap(&text, 10).expect("capped");
        assert_eq!(out, "abcdefghij");
        assert_eq!(elided, 94);
        let (out, elided) = cap(&text, 0).expect("capped");
        assert_eq!(out, "");
        assert_eq!(elided, 104);
    }

    #[test]
    fn capping_twice_changes_nothing() {
        let text = "word ".repeat(10_000);
        let (once, _) = cap(&text, 777).expect("capped");
        assert_eq!(cap(&once, 777), None);
    }
}
