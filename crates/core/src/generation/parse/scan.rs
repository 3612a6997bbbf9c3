//! Splits a model's answer into tokens: the known tags of COMPAT.md §3, CDATA
//! sections and the text between them, in one forward pass.
//!
//! Only the tag names of the format are tags; anything else that starts with
//! `<` (`Vec<String>`, `<b>`, a lone `<`) is text. Every look-ahead stops at
//! the next `<` (or, for CDATA and comments, at their terminator, searched
//! once), so scanning is linear in the input and never slices inside a char:
//! every index we cut at holds an ASCII byte.

/// The tag names of the format. Names are matched case-insensitively, with
/// `-` read as `_` (`<Files-Read>` is `files_read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    Observation,
    Type,
    Title,
    Subtitle,
    Facts,
    Fact,
    Narrative,
    Concepts,
    Concept,
    FilesRead,
    FilesModified,
    File,
    Summary,
    Request,
    Investigated,
    Learned,
    Completed,
    NextSteps,
    Notes,
    SkipSummary,
}

const TAG_NAMES: [(&str, Tag); 20] = [
    ("observation", Tag::Observation),
    ("type", Tag::Type),
    ("title", Tag::Title),
    ("subtitle", Tag::Subtitle),
    ("facts", Tag::Facts),
    ("fact", Tag::Fact),
    ("narrative", Tag::Narrative),
    ("concepts", Tag::Concepts),
    ("concept", Tag::Concept),
    ("files_read", Tag::FilesRead),
    ("files_modified", Tag::FilesModified),
    ("file", Tag::File),
    ("summary", Tag::Summary),
    ("request", Tag::Request),
    ("investigated", Tag::Investigated),
    ("learned", Tag::Learned),
    ("completed", Tag::Completed),
    ("next_steps", Tag::NextSteps),
    ("notes", Tag::Notes),
    ("skip_summary", Tag::SkipSummary),
];

impl Tag {
    /// The tag called `name`, if it is one of the format's.
    fn from_name(name: &str) -> Option<Tag> {
        TAG_NAMES
            .iter()
            .find(|(canonical, _)| same_tag_name(name, canonical))
            .map(|&(_, tag)| tag)
    }

    /// Tags that start a new top-level block; inside a block they mean the
    /// block was left unclosed.
    pub(crate) fn is_block(self) -> bool {
        matches!(self, Tag::Observation | Tag::Summary | Tag::SkipSummary)
    }
}

/// Case-insensitive comparison that also reads `-` as `_`.
fn same_tag_name(name: &str, canonical: &str) -> bool {
    let fold = |b: u8| if b == b'-' { b'_' } else { b.to_ascii_lowercase() };
    name.len() == canonical.len()
        && name
            .bytes()
            .zip(canonical.bytes())
            .all(|(a, b)| fold(a) == fold(b))
}

/// One piece of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// `<tag attrs>` or `<tag attrs/>`; `attrs` is the raw text after the name.
    Open {
        tag: Tag,
        attrs: &'a str,
        self_closing: bool,
    },
    /// `</tag>`.
    Close(Tag),
    /// Text between tags, entities not yet decoded.
    Text(&'a str),
    /// The inside of `<![CDATA[…]]>`, to be kept verbatim.
    CData(&'a str),
}

/// What starts at a `<`.
enum Markup<'a> {
    Token(Token<'a>),
    /// A comment, dropped.
    Comment,
}

const CDATA_OPEN: &str = "<![CDATA[";
const CDATA_CLOSE: &str = "]]>";
const COMMENT_OPEN: &str = "<!--";
const COMMENT_CLOSE: &str = "-->";

/// An iterator over the tokens of a text.
pub(crate) struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    /// Set once a search for `-->` has failed: none will succeed after it.
    no_comment_end: bool,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Scanner {
            text,
            pos: 0,
            no_comment_end: false,
        }
    }

    /// The markup starting at `start` (which holds `<`) and the index just
    /// past it, or `None` if that `<` is plain text.
    fn markup_at(&mut self, start: usize) -> Option<(Markup<'a>, usize)> {
        let rest = &self.text[start..];
        if !rest.starts_with('<') {
            return None;
        }
        if starts_with_ignore_case(rest, CDATA_OPEN) {
            return Some(self.cdata_at(start));
        }
        if rest.starts_with(COMMENT_OPEN) {
            return self.comment_at(start);
        }
        self.tag_at(start).map(|(token, end)| (Markup::Token(token), end))
    }

    /// A CDATA section; an unterminated one runs to the end of the input.
    fn cdata_at(&self, start: usize) -> (Markup<'a>, usize) {
        let body_start = start + CDATA_OPEN.len();
        let body = &self.text[body_start..];
        let (inner, end) = match body.find(CDATA_CLOSE) {
            Some(close) => (&body[..close], body_start + close + CDATA_CLOSE.len()),
            None => (body, self.text.len()),
        };
        (Markup::Token(Token::CData(inner)), end)
    }

    /// A comment; an unterminated `<!--` is text.
    fn comment_at(&mut self, start: usize) -> Option<(Markup<'a>, usize)> {
        if self.no_comment_end {
            return None;
        }
        let body_start = start + COMMENT_OPEN.len();
        match self.text[body_start..].find(COMMENT_CLOSE) {
            Some(close) => Some((Markup::Comment, body_start + close + COMMENT_CLOSE.len())),
            None => {
                self.no_comment_end = true;
                None
            }
        }
    }

    /// `<name …>`, `<name …/>` or `</name …>` for a known name.
    fn tag_at(&self, start: usize) -> Option<(Token<'a>, usize)> {
        let bytes = self.text.as_bytes();
        let mut name_start = start + 1;
        let closing = bytes.get(name_start) == Some(&b'/');
        if closing {
            name_start += 1;
        }
        if !bytes.get(name_start)?.is_ascii_alphabetic() {
            return None;
        }
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            .count();
        let name_end = name_start + name_len;
        let tag = Tag::from_name(&self.text[name_start..name_end])?;
        let after_name = *bytes.get(name_end)?;
        if !(after_name == b'>' || after_name == b'/' || after_name.is_ascii_whitespace()) {
            return None;
        }
        let close = find_tag_end(bytes, name_end)?;
        let token = if closing {
            Token::Close(tag)
        } else {
            let inside = self.text[name_end..close].trim_end();
            let self_closing = inside.ends_with('/');
            let attrs = inside.strip_suffix('/').unwrap_or(inside);
            Token::Open {
                tag,
                attrs,
                self_closing,
            }
        };
        Some((token, close + 1))
    }

    /// The index of the next `<` at or after `from` that starts markup, or
    /// the end of the text.
    fn next_markup_start(&mut self, from: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut search = from;
        while let Some(offset) = bytes
            .get(search..)
            .and_then(|tail| tail.iter().position(|&b| b == b'<'))
        {
            let candidate = search + offset;
            if self.markup_at(candidate).is_some() {
                return candidate;
            }
            search = candidate + 1;
        }
        self.text.len()
    }
}

impl<'a> Iterator for Scanner<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        while self.pos < self.text.len() {
            let start = self.pos;
            match self.markup_at(start) {
                Some((Markup::Token(token), end)) => {
                    self.pos = end;
                    return Some(token);
                }
                Some((Markup::Comment, end)) => self.pos = end,
                None => {
                    // `start` is not markup: the text runs to the next markup.
                    let end = self.next_markup_start(start + 1);
                    self.pos = end;
                    return Some(Token::Text(&self.text[start..end]));
                }
            }
        }
        None
    }
}

/// How far a tag whose quoted attribute value holds `<` may run, in bytes
/// (`reason="only <ls> ran"`). Bounds the cost of each failed tag.
const MAX_QUOTED_TAG_LEN: usize = 1024;

/// The index of the `>` closing a tag whose name ends at `from`, or `None`
/// if there is none. Tried in turn:
/// 1. the first `>` outside quotes before the next `<` (quoted values may
///    hold `>`);
/// 2. the first `>` outside quotes where one quoted value holds `<`
///    (`reason="only <ls> ran"`), within [`MAX_QUOTED_TAG_LEN`] bytes;
/// 3. the first `>` before the next `<`, quotes ignored (a stray quote:
///    `<observation id="1>`).
fn find_tag_end(bytes: &[u8], from: usize) -> Option<usize> {
    let tail = &bytes[from..];
    let window_len = tail.iter().position(|&b| b == b'<').unwrap_or(tail.len());
    let window = &tail[..window_len];
    let offset = first_unquoted_close(window, 0)
        .or_else(|| first_unquoted_close(&tail[..tail.len().min(MAX_QUOTED_TAG_LEN)], 1))
        .or_else(|| window.iter().position(|&b| b == b'>'))?;
    Some(from + offset)
}

/// The index of the first `>` outside `"…"` or `'…'` in `bytes`. A `<`
/// outside quotes ends the search, and so does a `<` inside quotes once
/// more than `quotes_with_lt` quoted values have held one.
fn first_unquoted_close(bytes: &[u8], quotes_with_lt: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    let mut quote_has_lt = false;
    let mut spent = 0;
    for (offset, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) if b == b'<' && !quote_has_lt => {
                if spent == quotes_with_lt {
                    return None;
                }
                spent += 1;
                quote_has_lt = true;
            }
            Some(_) => {}
            None if b == b'"' || b == b'\'' => {
                quote = Some(b);
                quote_has_lt = false;
            }
            None if b == b'>' => return Some(offset),
            None if b == b'<' => return None,
            None => {}
        }
    }
    None
}

/// Whether `text` starts with the ASCII `prefix`, ignoring ASCII case.
fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The value of attribute `name` (case-insensitive) in a tag's raw
/// attribute text, quotes removed, entities not decoded. A bare attribute
/// (`<x flag>`) has the value `""`.
pub(crate) fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let key_len = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let key = &rest[..key_len];
        rest = rest[key_len..].trim_start();
        let value = match rest.strip_prefix('=') {
            Some(after_equals) => {
                let (value, remaining) = split_attribute_value(after_equals.trim_start());
                rest = remaining;
                value
            }
            None => "",
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
    }
}

/// Splits `"value" rest`, `'value' rest` or `value rest` into the value and
/// what follows it. An unclosed quote runs to the end.
fn split_attribute_value(text: &str) -> (&str, &str) {
    let quote = text.chars().next().filter(|&c| c == '"' || c == '\'');
    match quote {
        Some(q) => {
            let body = &text[1..];
            match body.find(q) {
                Some(close) => (&body[..close], &body[close + 1..]),
                None => (body, ""),
            }
        }
        None => {
            let end = text.find(char::is_whitespace).unwrap_or(text.len());
            (&text[..end], &text[end..])
        }
    }
}
