//! Reads the token stream into observations, a summary and a skip marker,
//! closing whatever the model left open (a truncated answer ends mid-block).
//!
//! Every loop consumes at least one token per turn and nothing recurses, so
//! reading is linear in the number of tokens whatever their nesting.

use std::iter::Peekable;

use super::entities::decode_entities;
use super::scan::{Scanner, Tag, Token, attribute};
use super::text::{multi_line, single_line, split_bulleted_lines};
use super::vocab::{normalize_concept, normalize_type};
use super::{Parsed, ParsedObservation, ParsedSummary};

/// The most observations kept from one answer.
pub(crate) const MAX_OBSERVATIONS: usize = 20;
/// The most items kept in one list.
pub(crate) const MAX_LIST_ITEMS: usize = 50;

type Tokens<'a> = Peekable<Scanner<'a>>;

/// Reads every block of the answer. The caller decides whether the result
/// holds anything usable.
pub(crate) fn read_answer(text: &str) -> Parsed {
    let mut tokens = Scanner::new(text).peekable();
    let mut parsed = Parsed::default();
    while let Some(token) = tokens.next() {
        let Token::Open {
            tag,
            attrs,
            self_closing,
        } = token
        else {
            continue; // Prose, fences and stray tags between blocks.
        };
        match tag {
            Tag::Observation if !self_closing => {
                let observation = read_observation(&mut tokens, attrs);
                if is_usable(&observation) && parsed.observations.len() < MAX_OBSERVATIONS {
                    parsed.observations.push(observation);
                }
            }
            Tag::Summary if !self_closing => {
                let summary = read_summary(&mut tokens);
                if parsed.summary.is_none() && !is_blank(&summary) {
                    parsed.summary = Some(summary);
                }
            }
            Tag::SkipSummary => {
                let reason = read_skip_reason(&mut tokens, attrs, self_closing);
                parsed.skipped.get_or_insert(reason);
            }
            _ => {}
        }
    }
    parsed
}

/// The next token inside `block`, or `None` where the block ends: at its
/// closing tag (consumed), at the start of another block (left for the
/// caller: the block was never closed) or at the end of the input.
fn next_in_block<'a>(tokens: &mut Tokens<'a>, block: Tag) -> Option<Token<'a>> {
    match tokens.peek()? {
        Token::Close(tag) if *tag == block => {
            tokens.next();
            None
        }
        Token::Open { tag, .. } if tag.is_block() => None,
        _ => tokens.next(),
    }
}

/// The text of a field whose open tag was just read: text and CDATA up to
/// its closing tag (consumed) or, if that is missing, up to the next tag or
/// the end of the input. Entities are decoded, CDATA kept verbatim.
fn read_field_text(tokens: &mut Tokens<'_>, field: Tag) -> String {
    let mut out = String::new();
    while let Some(token) = tokens.peek() {
        match *token {
            Token::Text(raw) => out.push_str(&decode_entities(raw)),
            Token::CData(raw) => out.push_str(raw),
            Token::Close(tag) if tag == field => {
                tokens.next();
                break;
            }
            _ => break,
        }
        tokens.next();
    }
    out
}

/// The raw items of a list whose open tag was just read: its `item`
/// children, or, when it has none, its text split into lines with bullets
/// removed. Ends at the list's closing tag or at any other tag.
fn read_list(tokens: &mut Tokens<'_>, list: Tag, item: Tag) -> Vec<String> {
    let mut items = Vec::new();
    let mut loose_text = String::new();
    while let Some(token) = tokens.peek() {
        match *token {
            Token::Text(raw) => loose_text.push_str(&decode_entities(raw)),
            Token::CData(raw) => loose_text.push_str(raw),
            Token::Open {
                tag, self_closing, ..
            } if tag == item => {
                tokens.next();
                if !self_closing {
                    items.push(read_field_text(tokens, item));
                }
                continue;
            }
            Token::Close(tag) if tag == item => {}
            Token::Close(tag) if tag == list => {
                tokens.next();
                break;
            }
            _ => break,
        }
        tokens.next();
    }
    if items.iter().all(|item| item.trim().is_empty()) {
        return split_bulleted_lines(&loose_text);
    }
    items
}

/// An observation's fields as written, before cleaning.
#[derive(Default)]
struct RawObservation {
    kind: String,
    title: String,
    subtitle: String,
    narrative: String,
    facts: Vec<String>,
    concepts: Vec<String>,
    files_read: Vec<String>,
    files_modified: Vec<String>,
}

/// Reads an observation up to `</observation>`, the next block or the end.
/// `attrs` are the open tag's attributes (a `type="…"` is used when there
/// is no `<type>` field).
fn read_observation(tokens: &mut Tokens<'_>, attrs: &str) -> ParsedObservation {
    let mut raw = RawObservation::default();
    while let Some(token) = next_in_block(tokens, Tag::Observation) {
        if let Token::Open {
            tag,
            self_closing: false,
            ..
        } = token
        {
            read_observation_field(tokens, tag, &mut raw);
        }
    }
    if raw.kind.trim().is_empty() {
        raw.kind = attribute(attrs, "type").map(decode_entities).unwrap_or_default();
    }
    finish_observation(raw)
}

/// Reads the field that `tag` opens into `raw`. Scalars keep their first
/// non-blank value; lists accumulate. A bare `<fact>` or `<concept>` outside
/// its list still counts; other tags are ignored.
fn read_observation_field(tokens: &mut Tokens<'_>, tag: Tag, raw: &mut RawObservation) {
    match tag {
        Tag::Type => keep_first(&mut raw.kind, read_field_text(tokens, tag)),
        Tag::Title => keep_first(&mut raw.title, read_field_text(tokens, tag)),
        Tag::Subtitle => keep_first(&mut raw.subtitle, read_field_text(tokens, tag)),
        Tag::Narrative => keep_first(&mut raw.narrative, read_field_text(tokens, tag)),
        Tag::Facts => raw.facts.extend(read_list(tokens, tag, Tag::Fact)),
        Tag::Fact => raw.facts.push(read_field_text(tokens, tag)),
        Tag::Concepts => raw.concepts.extend(read_list(tokens, tag, Tag::Concept)),
        Tag::Concept => raw.concepts.push(read_field_text(tokens, tag)),
        Tag::FilesRead => raw.files_read.extend(read_list(tokens, tag, Tag::File)),
        Tag::FilesModified => raw.files_modified.extend(read_list(tokens, tag, Tag::File)),
        _ => {}
    }
}

/// Stores `value` in `slot` unless `slot` already holds non-blank text.
fn keep_first(slot: &mut String, value: String) {
    if slot.trim().is_empty() {
        *slot = value;
    }
}

/// Cleans and bounds a raw observation.
fn finish_observation(raw: RawObservation) -> ParsedObservation {
    ParsedObservation {
        kind: normalize_type(&single_line(&raw.kind)),
        title: single_line(&raw.title),
        subtitle: single_line(&raw.subtitle),
        facts: clean_items(raw.facts, false),
        narrative: multi_line(&raw.narrative),
        concepts: clean_concepts(&raw.concepts),
        files_read: clean_items(raw.files_read, true),
        files_modified: clean_items(raw.files_modified, true),
    }
}

/// Items as one-line text, blanks dropped, optionally deduplicated (first
/// occurrence kept), at most [`MAX_LIST_ITEMS`].
fn clean_items(raw: Vec<String>, deduplicate: bool) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for item in raw.iter().map(|item| single_line(item)) {
        if items.len() == MAX_LIST_ITEMS {
            break;
        }
        if item.is_empty() || (deduplicate && items.contains(&item)) {
            continue;
        }
        items.push(item);
    }
    items
}

/// The known concepts among the raw items (each may hold several, comma
/// separated), normalised, deduplicated, in order. Unknown ones are dropped.
fn clean_concepts(raw: &[String]) -> Vec<String> {
    let mut concepts: Vec<String> = Vec::new();
    for concept in raw
        .iter()
        .flat_map(|item| item.split(','))
        .filter_map(normalize_concept)
    {
        if !concepts.iter().any(|kept| kept == concept) {
            concepts.push(concept.to_owned());
        }
    }
    concepts
}

/// Whether an observation says anything: a title, a narrative or a fact.
fn is_usable(observation: &ParsedObservation) -> bool {
    !(observation.title.is_empty() && observation.narrative.is_empty() && observation.facts.is_empty())
}

/// Reads a summary up to `</summary>`, the next block or the end.
fn read_summary(tokens: &mut Tokens<'_>) -> ParsedSummary {
    let mut raw = ParsedSummary::default();
    while let Some(token) = next_in_block(tokens, Tag::Summary) {
        let Token::Open {
            tag,
            self_closing: false,
            ..
        } = token
        else {
            continue;
        };
        let slot = match tag {
            Tag::Request => &mut raw.request,
            Tag::Investigated => &mut raw.investigated,
            Tag::Learned => &mut raw.learned,
            Tag::Completed => &mut raw.completed,
            Tag::NextSteps => &mut raw.next_steps,
            Tag::Notes => &mut raw.notes,
            _ => continue,
        };
        keep_first(slot, read_field_text(tokens, tag));
    }
    ParsedSummary {
        request: multi_line(&raw.request),
        investigated: multi_line(&raw.investigated),
        learned: multi_line(&raw.learned),
        completed: multi_line(&raw.completed),
        next_steps: multi_line(&raw.next_steps),
        notes: multi_line(&raw.notes),
    }
}

/// Whether every field of a summary is empty.
fn is_blank(summary: &ParsedSummary) -> bool {
    [
        &summary.request,
        &summary.investigated,
        &summary.learned,
        &summary.completed,
        &summary.next_steps,
        &summary.notes,
    ]
    .iter()
    .all(|field| field.is_empty())
}

/// The reason of a skip marker: its `reason` attribute, or else its text
/// (`<skip_summary>reason</skip_summary>`), or `""`.
fn read_skip_reason(tokens: &mut Tokens<'_>, attrs: &str, self_closing: bool) -> String {
    let body = if self_closing {
        String::new()
    } else {
        read_field_text(tokens, Tag::SkipSummary)
    };
    let from_attribute = attribute(attrs, "reason").map(|value| multi_line(&decode_entities(value)));
    match from_attribute {
        Some(reason) if !reason.is_empty() => reason,
        _ => multi_line(&body),
    }
}
