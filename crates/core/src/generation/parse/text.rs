//! Cleans field text: whitespace trimming and collapsing, the per-field
//! length cap, and splitting a bulleted block of lines into list items.

/// The most chars kept in one text field or list item.
pub(crate) const MAX_FIELD_CHARS: usize = 8_000;

/// For one-line fields (type, title, subtitle, list items): every run of
/// whitespace, newlines included, becomes one space; trimmed and capped.
pub(crate) fn single_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_FIELD_CHARS));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > MAX_FIELD_CHARS * 4 {
            // Already past any possible cap; the rest would be cut anyway.
            break;
        }
    }
    cap_chars(out)
}

/// For prose fields (narrative, summary fields, skip reason): keeps line
/// breaks but trims the whole text, trailing spaces on each line and the
/// indentation the lines share (XML is often indented), and folds runs of
/// blank lines into one; capped.
pub(crate) fn multi_line(text: &str) -> String {
    let mut lines = text.split('\n').map(str::trim_end);
    let first = lines.next().unwrap_or("").trim_start();
    let rest: Vec<&str> = lines.collect();
    let indent = shared_indent(&rest);
    let mut out = String::with_capacity(text.len().min(MAX_FIELD_CHARS));
    let mut blank_pending = false;
    for line in std::iter::once(first).chain(rest.iter().map(|line| strip_indent(line, indent))) {
        if line.is_empty() {
            blank_pending = !out.is_empty();
            continue;
        }
        if out.is_empty() {
            // A first line indented deeper than the rest keeps no indent.
            out.push_str(line.trim_start());
        } else {
            out.push_str(if blank_pending { "\n\n" } else { "\n" });
            out.push_str(line);
        }
        blank_pending = false;
        if out.len() > MAX_FIELD_CHARS * 4 {
            break;
        }
    }
    cap_chars(out)
}

/// The smallest count of leading whitespace chars over the non-blank lines.
fn shared_indent(lines: &[&str]) -> usize {
    lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.chars().take_while(|c| c.is_whitespace()).count())
        .min()
        .unwrap_or(0)
}

/// `line` without its first `indent` chars, which are all whitespace (or
/// the line is blank).
fn strip_indent(line: &str, indent: usize) -> &str {
    match line.char_indices().nth(indent) {
        Some((index, _)) => &line[index..],
        None => "",
    }
}

/// Cuts `text` to at most [`MAX_FIELD_CHARS`] chars (on a char boundary)
/// and trims the end again, since the cut may land after a space.
fn cap_chars(mut text: String) -> String {
    if let Some((index, _)) = text.char_indices().nth(MAX_FIELD_CHARS) {
        text.truncate(index);
        let trimmed_len = text.trim_end().len();
        text.truncate(trimmed_len);
    }
    text
}

/// Splits a list written as lines (`- a`, `* b`, `1. c`, or bare lines)
/// into its items, bullets removed and blank lines dropped.
pub(crate) fn split_bulleted_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(strip_bullet)
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `line` without a leading `- `, `* `, `+ `, `• ` or `12. ` / `12) `.
fn strip_bullet(line: &str) -> &str {
    let line = line.trim_start();
    strip_symbol_bullet(line)
        .or_else(|| strip_number_bullet(line))
        .unwrap_or(line)
}

/// `- rest` (or `*`, `+`, `•`) → `rest`; `None` if `line` has no such bullet.
fn strip_symbol_bullet(line: &str) -> Option<&str> {
    let rest = ["-", "*", "+", "•"]
        .iter()
        .find_map(|bullet| line.strip_prefix(bullet))?;
    ends_bullet(rest).then_some(rest)
}

/// `12. rest` or `12) rest` → `rest`; `None` if `line` is not numbered.
fn strip_number_bullet(line: &str) -> Option<&str> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    // ASCII digits: `digits` is a char boundary.
    let rest = line[digits..].strip_prefix(['.', ')'])?;
    ends_bullet(rest).then_some(rest)
}

/// Whether the text after a bullet marker makes it one: a bullet is
/// followed by whitespace or nothing (`-5` and `1.5` are not bullets).
fn ends_bullet(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with(char::is_whitespace)
}
