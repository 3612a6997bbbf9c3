//! Removal of `<private>` spans and injected memory-context blocks before storage.
//!
//! Tags are matched case-insensitively and may carry attributes
//! (`<cairn-context project="x">`). Spans nest: an inner opening tag needs its
//! own closing tag, so `<private>a <private>b</private> c</private>` is removed
//! whole. An opening tag that is never closed removes everything to the end of
//! the string (fail closed). A closing tag with nothing open is left alone,
//! and so is a tag written as a quoted literal (`"<private>"` in source code,
//! `` `<private>` `` in markdown), which is a mention rather than markup.

use std::sync::OnceLock;

use regex::Regex;

/// Opening or closing tag; group 1 marks a closing tag, groups 2-4 the kind.
/// Attributes must be `name="value"` pairs, so prose such as
/// `<private key data here>` is not a tag.
const TAG_PATTERN: &str = r#"(?i)<(/)?[ \t]*(?:(private)|(cairn-context)|(claude-mem-context))(?:\s+[a-z_:][a-z0-9_:.\-]*\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))*\s*>"#;

/// Quotes that, wrapped tightly around a tag (`"<private>"`, `` `<private>` ``),
/// make it a mention in code or docs rather than a tag.
const QUOTES: [char; 3] = ['"', '\'', '`'];

/// Every tag holds one of these (ASCII case ignored; the tag names have no
/// letter that folds to a character outside ASCII).
const TAG_WORDS: [&[u8]; 2] = [b"private", b"-context"];

#[derive(Debug, Clone, Default)]
pub(super) struct PrivateTags {
    /// Compiled the first time a text could hold a tag.
    tag: OnceLock<Regex>,
}

impl PrivateTags {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Compiles the tag pattern now (a server, at start).
    pub(super) fn warm(&self) {
        self.tag();
    }

    fn tag(&self) -> &Regex {
        self.tag
            .get_or_init(|| Regex::new(TAG_PATTERN).expect("private tag pattern must compile"))
    }

    /// The text without its private spans and how many spans were removed,
    /// or `None` when there was nothing to remove (no allocation then).
    pub(super) fn strip(&self, text: &str) -> Option<(String, u32)> {
        let bytes = text.as_bytes();
        let holds = |word: &[u8]| bytes.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word));
        if !bytes.contains(&b'<') || !TAG_WORDS.iter().any(|word| holds(word)) {
            return None;
        }
        let mut out = String::new();
        let mut copied_to = 0;
        let mut open: Vec<usize> = Vec::new();
        let mut span_start = 0;
        let mut spans = 0u32;
        for caps in self.tag().captures_iter(text) {
            let Some(tag) = caps.get(0) else { continue };
            let (before, after) = (&text[..tag.start()], &text[tag.end()..]);
            if QUOTES
                .iter()
                .any(|q| before.ends_with(*q) && after.starts_with(*q))
            {
                continue;
            }
            let kind = (2..=4).find(|i| caps.get(*i).is_some()).unwrap_or(2);
            if caps.get(1).is_none() {
                if open.is_empty() {
                    span_start = tag.start();
                }
                open.push(kind);
            } else if let Some(pos) = open.iter().rposition(|k| *k == kind) {
                open.truncate(pos);
                if open.is_empty() {
                    out.push_str(&text[copied_to..span_start]);
                    copied_to = tag.end();
                    spans = spans.saturating_add(1);
                }
            }
        }
        if !open.is_empty() {
            out.push_str(&text[copied_to..span_start]);
            copied_to = text.len();
            spans = spans.saturating_add(1);
        }
        if spans == 0 {
            return None;
        }
        out.push_str(&text[copied_to..]);
        Some((out, spans))
    }

    /// True when the text has content and only whitespace is left outside private spans.
    pub(super) fn is_entirely_private(&self, text: &str) -> bool {
        match self.strip(text) {
            Some((rest, _)) => rest.trim().is_empty(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(text: &str) -> (String, u32) {
        PrivateTags::new()
            .strip(text)
            .unwrap_or_else(|| (text.to_string(), 0))
    }

    #[test]
    fn removes_several_spans_non_greedily() {
        let (out, n) = strip("a <private>one</private> b <private>two</private> c");
        assert_eq!(out, "a  b  c");
        assert_eq!(n, 2);
    }

    #[test]
    fn is_case_insensitive_and_multiline() {
        let (out, n) = strip("keep\n<PRIVATE>line 1\nline 2\n</Private>\nalso <pRiVaTe >x</private > kept");
        assert_eq!(out, "keep\n\nalso  kept");
        assert_eq!(n, 2);
    }

    #[test]
    fn nested_looking_spans_are_removed_whole() {
        let (out, n) = strip("a <private>x <private>y</private> z</private> b");
        assert_eq!(out, "a  b");
        assert_eq!(n, 1);
        assert!(!out.contains('z'));
    }

    #[test]
    fn unclosed_tag_removes_to_the_end() {
        let (out, n) = strip("public part <private>secret\nmore secret");
        assert_eq!(out, "public part ");
        assert_eq!(n, 1);
        let (out, n) = strip("x<private>a</private>y<private>b <private>c</private>");
        assert_eq!(out, "xy");
        assert_eq!(n, 2);
    }

    #[test]
    fn context_blocks_are_removed_and_counted() {
        let text = "before <cairn-context project=\"p\">\nmemory\n</cairn-context> mid \
                    <claude-mem-context>old</CLAUDE-MEM-CONTEXT> after";
        let (out, n) = strip(text);
        assert_eq!(out, "before  mid  after");
        assert_eq!(n, 2);
        let (out, n) = strip("<cairn-context>a <private>b</private> c</cairn-context>d");
        assert_eq!(out, "d");
        assert_eq!(n, 1);
    }

    #[test]
    fn lookalike_and_stray_tags_are_left_alone() {
        for text in [
            "<privateer>ahoy</privateer>",
            "/// <Private key data here.>\nfn main() {}",
            "const OPEN: &str = \"<cairn-context>\";\nconst CLOSE: &str = \"</cairn-context>\";",
            "Wrap notes in `<private>` tags; ('<private>') too",
            "<private-notes>x</private-notes>",
            "a < b and c > d",
            "stray </private> closing",
            "html <p>para</p> and generics Vec<private::T>",
            "",
            "<",
            "<private",
        ] {
            assert_eq!(PrivateTags::new().strip(text), None, "{text:?}");
        }
    }

    #[test]
    fn attributes_must_be_name_value_pairs() {
        let (out, n) = strip("a <private reason='x' by=me>b</private> c");
        assert_eq!(out, "a  c");
        assert_eq!(n, 1);
        let (out, n) = strip("a <private\n>b</private\t> c \"<private>\" d");
        assert_eq!(out, "a  c \"<private>\" d");
        assert_eq!(n, 1);
    }

    #[test]
    fn mismatched_close_ends_the_outer_span() {
        let (out, n) = strip("<private>a <cairn-context>b</private>c");
        assert_eq!(out, "c");
        assert_eq!(n, 1);
    }

    #[test]
    fn multibyte_text_around_tags_survives() {
        let (out, n) = strip("日本<private>秘密🦀</private>語é");
        assert_eq!(out, "日本語é");
        assert_eq!(n, 1);
    }

    #[test]
    fn entirely_private_cases() {
        let t = PrivateTags::new();
        assert!(t.is_entirely_private("<private>x</private>  "));
        assert!(t.is_entirely_private("  <private>a</private>\n<PRIVATE>b</PRIVATE>\t"));
        assert!(t.is_entirely_private("<private>unclosed"));
        assert!(t.is_entirely_private("<private></private>"));
        assert!(t.is_entirely_private("<cairn-context>injected</cairn-context>"));
        assert!(!t.is_entirely_private(""));
        assert!(!t.is_entirely_private("   "));
        assert!(!t.is_entirely_private("plain text"));
        assert!(!t.is_entirely_private("<private>x</private> y"));
        assert!(!t.is_entirely_private("y <private>x</private>"));
        assert!(!t.is_entirely_private("</private>"));
    }
}
