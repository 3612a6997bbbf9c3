//! Property tests: the parser never panics and always returns bounded,
//! normalised values; and rendering random observations and summaries to
//! the §3 format in various styles, then parsing, gives them back.

use proptest::prelude::*;
use proptest::sample::select;

use super::read::{MAX_LIST_ITEMS, MAX_OBSERVATIONS};
use super::text::MAX_FIELD_CHARS;
use super::vocab::{KNOWN_CONCEPTS, KNOWN_TYPES};
use super::*;

const CASES: u32 = 256;

/// A modest number of cases, and no regression files written next to the
/// crate: a failure prints its minimal input instead.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(CASES)
    }
}

// ---- never panics ----

/// Pieces that steer random input into the scanner's and reader's corners.
const FRAGMENTS: &[&str] = &[
    "\u{0}",
    "&#0;",
    "<observation>",
    "</observation>",
    "<observation id=\"1\">",
    "<OBSERVATION>",
    "<type>",
    "</type>",
    "security-alert",
    "<title>",
    "</title>",
    "<narrative>",
    "</narrative>",
    "<facts>",
    "</facts>",
    "<fact>",
    "</fact>",
    "<fact/>",
    "<concepts>",
    "<concept>",
    "gotcha,",
    "<files_read>",
    "<file>",
    "</file>",
    "<summary>",
    "</summary>",
    "<request>",
    "<next_steps>",
    "<skip_summary",
    "<skip_summary reason=\"",
    "/>",
    ">",
    "<",
    "</",
    "\"",
    "'",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "&",
    "&#x",
    "&#",
    ";",
    "&amp;",
    "```",
    "```xml\n",
    "\n- ",
    "1. ",
    "é",
    "😀",
    "\u{0}",
    " ",
    "\n",
];

/// Random text made of format fragments and arbitrary chars.
fn fragment_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        select(FRAGMENTS).prop_map(str::to_owned),
        any::<String>(),
        "[a-z ]{0,6}",
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// Checks the guarantees every successful parse makes.
fn assert_bounded(parsed: &Parsed) {
    assert!(parsed.observations.len() <= MAX_OBSERVATIONS);
    for observation in &parsed.observations {
        assert!(
            KNOWN_TYPES.contains(&observation.kind.as_str()),
            "{observation:?}"
        );
        assert!(
            !(observation.title.is_empty()
                && observation.narrative.is_empty()
                && observation.facts.is_empty())
        );
        for text in [&observation.title, &observation.subtitle, &observation.narrative] {
            assert_clean_field(text);
        }
        for list in [
            &observation.facts,
            &observation.files_read,
            &observation.files_modified,
        ] {
            assert!(list.len() <= MAX_LIST_ITEMS);
            list.iter().for_each(|item| {
                assert!(!item.is_empty());
                assert_clean_field(item);
            });
        }
        assert!(
            observation
                .concepts
                .iter()
                .all(|c| KNOWN_CONCEPTS.contains(&c.as_str()))
        );
    }
    if let Some(summary) = &parsed.summary {
        let fields = [
            &summary.request,
            &summary.investigated,
            &summary.learned,
            &summary.completed,
            &summary.next_steps,
            &summary.notes,
        ];
        assert!(fields.iter().any(|field| !field.is_empty()));
        fields.into_iter().for_each(assert_clean_field);
    }
    if let Some(reason) = &parsed.skipped {
        assert_clean_field(reason);
    }
}

/// A cleaned field is trimmed, within the cap, and storable.
fn assert_clean_field(text: &String) {
    assert!(text.chars().count() <= MAX_FIELD_CHARS);
    assert_eq!(text.trim(), text);
    assert!(!text.contains('\0'), "Postgres cannot store U+0000: {text:?}");
}

/// Parses `input` and checks the result, whichever way it goes.
fn check_any_input(input: &str) {
    match parse(input) {
        Ok(parsed) => assert_bounded(&parsed),
        Err(error) => assert_eq!(error.class, ErrorClass::ParseError),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_strings_never_panic(input in any::<String>()) {
        check_any_input(&input);
    }

    #[test]
    fn fragment_soup_never_panics(input in fragment_soup()) {
        check_any_input(&input);
    }
}

// ---- round trip ----

/// How one block is written out.
#[derive(Clone, Debug)]
struct Style {
    uppercase_tags: bool,
    /// Wrap text in CDATA (when it does not contain `]]>`).
    cdata: bool,
    /// Which spelling of `&lt;` / `&amp;` to use: named, decimal or hex.
    entity_spelling: u8,
    /// Write lists as bulleted lines instead of item tags.
    lists_as_lines: bool,
    /// Write concepts comma-separated.
    concepts_with_commas: bool,
    indent: usize,
    /// Whitespace around one-line values.
    padding: String,
    /// How to write an empty field: 0 omit, 1 `<x></x>`, 2 `<x/>`.
    empty_field: u8,
    /// The order in which observation fields are written.
    field_order: Vec<usize>,
}

fn style() -> impl Strategy<Value = Style> {
    let order = Just((0..8).collect::<Vec<usize>>()).prop_shuffle();
    (
        any::<[bool; 5]>(),
        0u8..3,
        0usize..6,
        "[ \t\n]{0,3}",
        0u8..3,
        order,
    )
        .prop_map(
            |(flags, entity_spelling, indent, padding, empty_field, field_order)| Style {
                uppercase_tags: flags[0],
                cdata: flags[1],
                lists_as_lines: flags[2],
                concepts_with_commas: flags[3] && !flags[2],
                entity_spelling,
                indent,
                padding,
                empty_field,
                field_order,
            },
        )
}

/// A word with the characters that need care: `<`, `&`, `>`, quotes,
/// non-ASCII, and text that looks like an entity or a tag.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z0-9.,;:!?()/_=-]{1,8}",
        1 => "[<>&\"'éß漢😀]{1,3}",
        1 => select(&["&amp;", "&lt;", "<title>", "</observation>", "]]>", "&#39;", "<![CDATA[", "-", "1."][..])
            .prop_map(str::to_owned),
    ]
}

/// One-line text of `min..max` words.
fn line(min: usize, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(word(), min..max).prop_map(|words| words.join(" "))
}

/// Multi-line text, possibly empty, lines non-blank.
fn paragraph() -> impl Strategy<Value = String> {
    prop::collection::vec(line(1, 6), 0..4).prop_map(|lines| lines.join("\n"))
}

/// A type as the model might write it, and the type it should be read as.
fn written_type() -> impl Strategy<Value = (String, String)> {
    let known = (select(&KNOWN_TYPES[..]), any::<bool>(), any::<bool>()).prop_map(|(kind, upper, dash)| {
        let mut written = if upper {
            kind.to_uppercase()
        } else {
            kind.to_owned()
        };
        if dash {
            written = written.replace('_', "-");
        }
        (written, kind.to_owned())
    });
    let unknown =
        select(&["insight", "note", "", "bug fix"][..]).prop_map(|t| (t.to_owned(), "discovery".into()));
    prop_oneof![4 => known, 1 => unknown]
}

/// Concepts as written (known ones in varied spellings, some unknown).
fn written_concepts() -> impl Strategy<Value = Vec<String>> {
    let known = (select(&KNOWN_CONCEPTS[..]), any::<bool>()).prop_map(|(concept, upper)| {
        if upper {
            concept.to_uppercase().replace('-', "_")
        } else {
            concept.to_owned()
        }
    });
    let concept = prop_oneof![4 => known, 1 => select(&["made-up", "misc"][..]).prop_map(str::to_owned)];
    prop::collection::vec(concept, 0..5)
}

/// An observation as the model wrote it.
#[derive(Clone, Debug)]
struct WrittenObservation {
    kind: (String, String),
    title: String,
    subtitle: String,
    facts: Vec<String>,
    narrative: String,
    concepts: Vec<String>,
    files_read: Vec<String>,
    files_modified: Vec<String>,
}

fn written_observation() -> impl Strategy<Value = WrittenObservation> {
    let files = || prop::collection::vec(select(&["a.rs", "src/b.rs", "c d.rs", "é.rs"][..]), 0..5);
    let as_strings = |files: Vec<&str>| files.into_iter().map(str::to_owned).collect();
    (
        written_type(),
        line(1, 6),
        line(0, 6),
        prop::collection::vec(line(1, 6), 0..5),
        paragraph(),
        written_concepts(),
        files(),
        files(),
    )
        .prop_map(
            move |(kind, title, subtitle, facts, narrative, concepts, read, modified)| WrittenObservation {
                kind,
                title,
                subtitle,
                facts,
                narrative,
                concepts,
                files_read: as_strings(read),
                files_modified: as_strings(modified),
            },
        )
}

/// What parsing the written observation should give.
fn expected_observation(written: &WrittenObservation) -> ParsedObservation {
    let concepts = written
        .concepts
        .iter()
        .map(|c| c.to_lowercase().replace('_', "-"));
    ParsedObservation {
        kind: written.kind.1.clone(),
        title: written.title.clone(),
        subtitle: written.subtitle.clone(),
        facts: written.facts.clone(),
        narrative: written.narrative.clone(),
        concepts: dedup(concepts.filter(|c| KNOWN_CONCEPTS.contains(&c.as_str()))),
        files_read: dedup(written.files_read.iter().cloned()),
        files_modified: dedup(written.files_modified.iter().cloned()),
    }
}

/// The items in order, later repeats removed.
fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
}

/// Writes text so that it reads back as itself: CDATA or escaped `<`, `&`.
fn escape(text: &str, style: &Style) -> String {
    if style.cdata && !text.contains("]]>") {
        return format!("<![CDATA[{text}]]>");
    }
    let (lt, amp) = match style.entity_spelling {
        0 => ("&lt;", "&amp;"),
        1 => ("&#60;", "&#38;"),
        _ => ("&#x3C;", "&#x26;"),
    };
    text.replace('&', amp).replace('<', lt)
}

/// `name` in the style's case.
fn tag_name(name: &str, style: &Style) -> String {
    if style.uppercase_tags {
        name.to_uppercase()
    } else {
        name.to_owned()
    }
}

/// `<name>` + `inner` (already escaped) + `</name>`, or the empty form.
fn element(name: &str, inner: &str, style: &Style) -> String {
    let name = tag_name(name, style);
    match (inner.is_empty(), style.empty_field) {
        (true, 0) => String::new(),
        (true, 2) => format!("<{name}/>"),
        _ => format!("<{name}>{inner}</{name}>"),
    }
}

/// A one-line field, padded with whitespace.
fn one_line_field(name: &str, text: &str, style: &Style) -> String {
    let inner = if text.is_empty() {
        String::new()
    } else {
        escape(text, style)
    };
    let padded = if inner.is_empty() {
        inner
    } else {
        format!("{0}{inner}{0}", style.padding)
    };
    element(name, &padded, style)
}

/// A multi-line field, each line indented as in a pretty-printed file.
fn prose_field(name: &str, text: &str, style: &Style) -> String {
    if text.is_empty() {
        return element(name, "", style);
    }
    let indent = " ".repeat(style.indent);
    let indented = text.replace('\n', &format!("\n{indent}"));
    element(name, &format!("\n{indent}{}\n", escape(&indented, style)), style)
}

/// A list, as item tags or bulleted lines (or, for concepts, commas).
fn list_field(name: &str, item: &str, items: &[String], style: &Style, commas: bool) -> String {
    let inner = if commas {
        escape(&items.join(", "), style)
    } else if style.lists_as_lines {
        items
            .iter()
            .map(|i| format!("\n- {}", escape(i, style)))
            .collect::<String>()
    } else {
        items
            .iter()
            .map(|i| element(item, &escape(i, style), style))
            .collect::<String>()
    };
    element(name, &inner, style)
}

fn render_observation(written: &WrittenObservation, style: &Style) -> String {
    let fields = [
        one_line_field("type", &written.kind.0, style),
        one_line_field("title", &written.title, style),
        one_line_field("subtitle", &written.subtitle, style),
        list_field("facts", "fact", &written.facts, style, false),
        prose_field("narrative", &written.narrative, style),
        list_field(
            "concepts",
            "concept",
            &written.concepts,
            style,
            style.concepts_with_commas,
        ),
        list_field("files_read", "file", &written.files_read, style, false),
        list_field("files_modified", "file", &written.files_modified, style, false),
    ];
    let body: String = style
        .field_order
        .iter()
        .map(|&i| format!("\n  {}", fields[i]))
        .collect();
    let name = tag_name("observation", style);
    format!("<{name} id=\"x\">{body}\n</{name}>")
}

fn render_summary(summary: &ParsedSummary, style: &Style) -> String {
    let fields = [
        ("request", &summary.request),
        ("investigated", &summary.investigated),
        ("learned", &summary.learned),
        ("completed", &summary.completed),
        ("next_steps", &summary.next_steps),
        ("notes", &summary.notes),
    ];
    let body: String = fields
        .iter()
        .map(|(name, text)| format!("\n  {}", prose_field(name, text, style)))
        .collect();
    let name = tag_name("summary", style);
    format!("<{name}>{body}\n</{name}>")
}

/// Puts XML between prose, optionally in a code fence.
fn wrap(xml: &str, before: &str, after: &str, fenced: bool) -> String {
    if fenced {
        format!("{before}\n```xml\n{xml}\n```\n{after}")
    } else {
        format!("{before}{xml}{after}")
    }
}

fn prose() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,:!?\n`>&]{0,40}"
}

fn summary() -> impl Strategy<Value = ParsedSummary> {
    (
        paragraph(),
        paragraph(),
        paragraph(),
        paragraph(),
        paragraph(),
        paragraph(),
    )
        .prop_map(
            |(request, investigated, learned, completed, next_steps, notes)| ParsedSummary {
                request,
                investigated,
                learned,
                completed,
                next_steps,
                notes,
            },
        )
        .prop_filter("a summary with some text", |s| {
            !(s.request.is_empty()
                && s.investigated.is_empty()
                && s.learned.is_empty()
                && s.completed.is_empty()
                && s.next_steps.is_empty()
                && s.notes.is_empty())
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn observations_round_trip(
        written in prop::collection::vec((written_observation(), style()), 1..4),
        before in prose(),
        after in prose(),
        fenced in any::<bool>(),
    ) {
        let xml: String = written.iter().map(|(o, style)| render_observation(o, style) + "\n").collect();
        let input = wrap(&xml, &before, &after, fenced);
        let parsed = parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let expected: Vec<ParsedObservation> = written.iter().map(|(o, _)| expected_observation(o)).collect();
        prop_assert_eq!(parsed.observations, expected, "input: {}", input);
        prop_assert_eq!(parsed.summary, None);
        prop_assert_eq!(parsed.skipped, None);
    }

    #[test]
    fn summaries_round_trip(
        summary in summary(),
        style in style(),
        before in prose(),
        after in prose(),
        fenced in any::<bool>(),
    ) {
        let input = wrap(&render_summary(&summary, &style), &before, &after, fenced);
        let parsed = parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.summary, Some(summary), "input: {}", input);
        prop_assert!(parsed.observations.is_empty());
    }

    #[test]
    fn skip_reason_round_trips(reason in line(0, 6), as_attribute in any::<bool>()) {
        let input = if as_attribute {
            // `<` and `>` stay raw inside the quotes.
            format!("<skip_summary reason=\"{}\"/>", reason.replace('&', "&amp;").replace('"', "&quot;"))
        } else {
            format!("<skip_summary>{}</skip_summary>", reason.replace('&', "&amp;").replace('<', "&lt;"))
        };
        let parsed = parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.skipped, Some(reason), "input: {}", input);
    }
}
