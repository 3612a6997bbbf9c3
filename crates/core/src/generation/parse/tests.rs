//! Unit tests of the parser: one per leniency rule, plus pathological inputs.

use super::entities::decode_entities;
use super::read::{MAX_LIST_ITEMS, MAX_OBSERVATIONS};
use super::text::MAX_FIELD_CHARS;
use super::*;

/// Parses `text`, failing the test if it is rejected.
fn parse_ok(text: &str) -> Parsed {
    match parse(text) {
        Ok(parsed) => parsed,
        Err(error) => panic!("rejected: {error}"),
    }
}

/// The only observation of `text`.
fn only_observation(text: &str) -> ParsedObservation {
    let mut parsed = parse_ok(text);
    assert_eq!(parsed.observations.len(), 1, "{parsed:?}");
    parsed.observations.remove(0)
}

/// The summary of `text`, failing if there is none.
fn summary_of(text: &str) -> ParsedSummary {
    parse_ok(text).summary.expect("a summary")
}

const FULL_OBSERVATION: &str = "<observation>
  <type>bugfix</type>
  <title>Fix the retry loop</title>
  <subtitle>Backoff was never reset</subtitle>
  <facts><fact>retry.rs resets the delay</fact><fact>tests cover it</fact></facts>
  <narrative>The loop kept doubling.</narrative>
  <concepts><concept>gotcha</concept><concept>problem-solution</concept></concepts>
  <files_read><file>src/retry.rs</file></files_read>
  <files_modified><file>src/retry.rs</file><file>src/worker.rs</file></files_modified>
</observation>";

fn full_observation() -> ParsedObservation {
    ParsedObservation {
        kind: "bugfix".into(),
        title: "Fix the retry loop".into(),
        subtitle: "Backoff was never reset".into(),
        facts: vec!["retry.rs resets the delay".into(), "tests cover it".into()],
        narrative: "The loop kept doubling.".into(),
        concepts: vec!["gotcha".into(), "problem-solution".into()],
        files_read: vec!["src/retry.rs".into()],
        files_modified: vec!["src/retry.rs".into(), "src/worker.rs".into()],
    }
}

// ---- well-formed answers ----

#[test]
fn reads_a_complete_observation() {
    assert_eq!(only_observation(FULL_OBSERVATION), full_observation());
}

#[test]
fn u0000_is_removed_everywhere() {
    let with_nul = FULL_OBSERVATION
        .replace("Fix the", "Fix\0 the")
        .replace("<file>src", "<file>\0src");
    let with_nul = format!("\0{}\0", with_nul.replace("<type>", "<ty\0pe>"));
    assert_eq!(only_observation(&with_nul), full_observation());
    let summary = summary_of("<summary><request>Fix\0 it</request><notes>\0</notes></summary>");
    assert_eq!((summary.request.as_str(), summary.notes.as_str()), ("Fix it", ""));
    assert_eq!(
        only_observation("<observation><title>a&#0;b</title></observation>").title,
        "a&#0;b"
    );
}

#[test]
fn reads_a_complete_summary() {
    let text = "<summary><request>Add retries</request><investigated>worker.rs</investigated>\
        <learned>Backoff resets</learned><completed>Retry loop</completed>\
        <next_steps>Ship it</next_steps><notes>none</notes></summary>";
    let expected = ParsedSummary {
        request: "Add retries".into(),
        investigated: "worker.rs".into(),
        learned: "Backoff resets".into(),
        completed: "Retry loop".into(),
        next_steps: "Ship it".into(),
        notes: "none".into(),
    };
    let parsed = parse_ok(text);
    assert_eq!(parsed.summary, Some(expected));
    assert!(parsed.observations.is_empty());
    assert_eq!(parsed.skipped, None);
}

// ---- text around the XML ----

#[test]
fn ignores_prose_before_and_after() {
    let text = format!("Sure! Here is what I saw:\n\n{FULL_OBSERVATION}\n\nLet me know if you need more.");
    assert_eq!(only_observation(&text), full_observation());
}

#[test]
fn reads_inside_a_markdown_code_fence() {
    let text = format!("Here you go:\n```xml\n{FULL_OBSERVATION}\n```\nDone.");
    assert_eq!(only_observation(&text), full_observation());
}

#[test]
fn reads_every_observation_in_order() {
    let text = "<observation><title>one</title></observation> and \
        <observation><title>two</title></observation><observation><title>three</title></observation>";
    let titles: Vec<String> = parse_ok(text).observations.into_iter().map(|o| o.title).collect();
    assert_eq!(titles, ["one", "two", "three"]);
}

#[test]
fn uses_only_the_first_non_empty_summary() {
    let text = "<summary><request/></summary><summary><request>first</request></summary>\
        <summary><request>second</request></summary>";
    assert_eq!(summary_of(text).request, "first");
}

#[test]
fn reads_observations_and_summary_together() {
    let text = format!("{FULL_OBSERVATION}<summary><learned>it works</learned></summary>");
    let parsed = parse_ok(&text);
    assert_eq!(parsed.observations, vec![full_observation()]);
    assert_eq!(summary_of(&text).learned, "it works");
}

// ---- missing fields, case, attributes, whitespace ----

#[test]
fn missing_fields_are_empty() {
    let observation = only_observation("<observation><title>Only a title</title></observation>");
    let expected = ParsedObservation {
        kind: "discovery".into(),
        title: "Only a title".into(),
        ..ParsedObservation::default()
    };
    assert_eq!(observation, expected);
    let summary = summary_of("<summary><learned>x</learned></summary>");
    assert_eq!(
        summary,
        ParsedSummary {
            learned: "x".into(),
            ..ParsedSummary::default()
        }
    );
}

#[test]
fn tag_names_are_case_insensitive() {
    let text = FULL_OBSERVATION
        .replace("observation>", "OBSERVATION>")
        .replace("<title>", "<Title>")
        .replace("</title>", "</TITLE>")
        .replace("files_modified", "Files_Modified")
        .replace("<fact>", "<FACT>");
    assert_eq!(only_observation(&text), full_observation());
}

#[test]
fn tag_names_may_use_dashes() {
    let text = "<observation><title>t</title><files-read><file>a.rs</file></files-read></observation>\
        <summary><next-steps>more</next-steps></summary>";
    let parsed = parse_ok(text);
    assert_eq!(parsed.observations[0].files_read, ["a.rs"]);
    assert_eq!(summary_of(text).next_steps, "more");
}

#[test]
fn attributes_on_tags_are_tolerated() {
    let text = "<observation id=\"1\" kind='x > y'><title lang=en>Attributed</title>\
        <facts count=\"1\"><fact n=\"1\">a fact</fact></facts></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "Attributed");
    assert_eq!(observation.facts, ["a fact"]);
}

#[test]
fn whitespace_is_trimmed_and_collapsed() {
    let text = "<observation>\n  <title>\n    Spread   over\n    lines\n  </title>\n\
        <facts><fact>\n   a   fact\n </fact></facts>\n</observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "Spread over lines");
    assert_eq!(observation.facts, ["a fact"]);
}

#[test]
fn narrative_keeps_lines_but_drops_shared_indent() {
    let text = "<observation><title>t</title>
      <narrative>
        First line.
        Second line,
          indented more.



        After a gap.   
      </narrative>
    </observation>";
    let narrative = only_observation(text).narrative;
    assert_eq!(
        narrative,
        "First line.\nSecond line,\n  indented more.\n\nAfter a gap."
    );
}

#[test]
fn repeated_fields_keep_the_first_non_blank_value_and_lists_accumulate() {
    let text = "<observation><title> </title><title>first</title><title>second</title>\
        <facts><fact>a</fact></facts><facts><fact>b</fact></facts></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "first");
    assert_eq!(observation.facts, ["a", "b"]);
}

// ---- type and concepts ----

#[test]
fn unknown_or_missing_type_becomes_discovery() {
    for type_tag in ["<type>insight</type>", "<type></type>", "<type/>", ""] {
        let text = format!("<observation>{type_tag}<title>t</title></observation>");
        assert_eq!(only_observation(&text).kind, "discovery", "{type_tag}");
    }
}

#[test]
fn type_is_normalised() {
    let cases = [
        ("BugFix", "bugfix"),
        (" Feature ", "feature"),
        ("security-alert", "security_alert"),
        ("Security Note", "security_note"),
        ("DECISION", "decision"),
    ];
    for (written, stored) in cases {
        let text = format!("<observation><type>{written}</type><title>t</title></observation>");
        assert_eq!(only_observation(&text).kind, stored, "{written}");
    }
}

#[test]
fn type_attribute_is_used_when_there_is_no_type_field() {
    let text = "<observation type=\"refactor\"><title>t</title></observation>";
    assert_eq!(only_observation(text).kind, "refactor");
}

#[test]
fn concepts_keep_only_the_known_seven_normalised() {
    let text = "<observation><title>t</title><concepts><concept>Gotcha</concept>\
        <concept>made-up</concept><concept>TRADE_OFF</concept><concept>how it works</concept>\
        <concept>gotcha</concept></concepts></observation>";
    assert_eq!(
        only_observation(text).concepts,
        ["gotcha", "trade-off", "how-it-works"]
    );
}

#[test]
fn concepts_may_be_comma_separated() {
    let text =
        "<observation><title>t</title><concepts>pattern, what-changed,unknown</concepts></observation>";
    assert_eq!(only_observation(text).concepts, ["pattern", "what-changed"]);
    let text = "<observation><title>t</title><concepts><concept>gotcha, pattern</concept></concepts>\
        </observation>";
    assert_eq!(only_observation(text).concepts, ["gotcha", "pattern"]);
}

// ---- entities and CDATA ----

#[test]
fn predefined_entities_are_decoded() {
    let text = "<observation><title>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;</title></observation>";
    assert_eq!(only_observation(text).title, "a & b <c> \"d\" 'e'");
}

#[test]
fn numeric_references_are_decoded() {
    assert_eq!(
        decode_entities("it&#39;s &#x27;x&#X27; &#x1F600; &#233;"),
        "it's 'x' 😀 é"
    );
}

#[test]
fn unknown_entities_are_left_as_is() {
    for raw in [
        "&nbsp;", "&copy;", "& alone", "&amp", "&#;", "&#x;", "&#12a;", "&AMP;", "AT&T",
    ] {
        assert_eq!(decode_entities(raw), raw);
    }
}

#[test]
fn invalid_code_points_are_left_as_is() {
    for raw in [
        "&#xD800;",
        "&#x110000;",
        "&#0;",
        "&#99999999999;",
        "&#xFFFFFFFFFF;",
    ] {
        assert_eq!(decode_entities(raw), raw);
    }
}

#[test]
fn cdata_is_kept_verbatim() {
    let text = "<observation><title><![CDATA[Vec<T> & <b>friends</b> &amp;]]></title>\
        <narrative>before <![CDATA[<raw>]]> after</narrative></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "Vec<T> & <b>friends</b> &amp;");
    assert_eq!(observation.narrative, "before <raw> after");
}

#[test]
fn unknown_tags_are_text() {
    let text = "<observation><title>Use Vec<String> in <code>parse</code></title></observation>";
    assert_eq!(
        only_observation(text).title,
        "Use Vec<String> in <code>parse</code>"
    );
}

#[test]
fn comments_are_dropped() {
    let text = "<!-- preface --><observation><title>a<!-- hidden -->b</title></observation>";
    assert_eq!(only_observation(text).title, "ab");
}

// ---- truncated output ----

#[test]
fn unclosed_observation_runs_to_the_end() {
    let text = "<observation><type>feature</type><title>Cut off</title><facts><fact>one</fact>";
    let observation = only_observation(text);
    assert_eq!(observation.kind, "feature");
    assert_eq!(observation.title, "Cut off");
    assert_eq!(observation.facts, ["one"]);
}

#[test]
fn unclosed_field_takes_text_up_to_the_next_tag() {
    let text = "<observation><title>No close<narrative>The story</narrative></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "No close");
    assert_eq!(observation.narrative, "The story");
}

#[test]
fn unclosed_field_at_the_end_takes_the_rest() {
    let text = "<observation><title>Done</title><narrative>The model ran out of tok";
    assert_eq!(only_observation(text).narrative, "The model ran out of tok");
}

#[test]
fn unclosed_observation_ends_at_the_next_block() {
    let text = "<observation><title>first</title><observation><title>second</title></observation>\
        <summary><learned>x</learned>";
    let parsed = parse_ok(text);
    let titles: Vec<&str> = parsed.observations.iter().map(|o| o.title.as_str()).collect();
    assert_eq!(titles, ["first", "second"]);
    assert_eq!(parsed.summary.map(|s| s.learned), Some("x".into()));
}

#[test]
fn a_half_written_tag_at_the_end_is_text() {
    let text = "<observation><title>Done</title><narrative>story</narrative></observ";
    assert_eq!(only_observation(text).narrative, "story");
    let text = "<observation><title>Done</title><narrative>story</narr";
    assert_eq!(only_observation(text).narrative, "story</narr");
}

#[test]
fn observation_without_title_narrative_or_facts_is_dropped() {
    let text = "<observation><type>bugfix</type><subtitle>s</subtitle><concepts>gotcha</concepts>\
        </observation><observation><facts><fact>kept</fact></facts></observation>";
    let parsed = parse_ok(text);
    assert_eq!(parsed.observations.len(), 1);
    assert_eq!(parsed.observations[0].facts, ["kept"]);
}

// ---- lists ----

#[test]
fn lists_without_items_are_split_into_lines() {
    let text = "<observation><title>t</title><facts>
        - dash bullet
        * star bullet
        1. numbered
        12) also numbered
        plain line

        -5 is not a bullet
      </facts>
      <files_read>
        src/a.rs
        - src/b.rs
      </files_read></observation>";
    let observation = only_observation(text);
    let expected_facts = [
        "dash bullet",
        "star bullet",
        "numbered",
        "also numbered",
        "plain line",
        "-5 is not a bullet",
    ];
    assert_eq!(observation.facts, expected_facts);
    assert_eq!(observation.files_read, ["src/a.rs", "src/b.rs"]);
}

#[test]
fn concepts_without_items_are_split_into_lines() {
    let text = "<observation><title>t</title><concepts>\n- gotcha\n- Pattern\n</concepts></observation>";
    assert_eq!(only_observation(text).concepts, ["gotcha", "pattern"]);
}

#[test]
fn files_are_deduplicated_in_order() {
    let text = "<observation><title>t</title><files_modified><file>b.rs</file><file>a.rs</file>\
        <file> b.rs </file><file></file><file>c.rs</file><file>a.rs</file></files_modified></observation>";
    assert_eq!(only_observation(text).files_modified, ["b.rs", "a.rs", "c.rs"]);
}

#[test]
fn empty_list_items_are_dropped() {
    let text = "<observation><title>t</title><facts><fact> </fact><fact/><fact>real</fact></facts>\
        </observation>";
    assert_eq!(only_observation(text).facts, ["real"]);
}

#[test]
fn bare_items_outside_their_list_count() {
    let text = "<observation><title>t</title><fact>loose fact</fact><concept>gotcha</concept></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.facts, ["loose fact"]);
    assert_eq!(observation.concepts, ["gotcha"]);
}

#[test]
fn unclosed_list_item_ends_at_the_next_tag() {
    let text = "<observation><title>t</title><facts><fact>one<fact>two</facts></observation>";
    assert_eq!(only_observation(text).facts, ["one", "two"]);
}

// ---- skip marker ----

#[test]
fn skip_summary_with_reason_attribute() {
    let parsed = parse_ok("Nothing here.\n<skip_summary reason=\"only &quot;ls&quot; ran\"/>");
    assert_eq!(parsed.skipped.as_deref(), Some("only \"ls\" ran"));
    assert!(parsed.observations.is_empty());
    assert_eq!(parsed.summary, None);
}

#[test]
fn skip_summary_with_reason_text() {
    let parsed = parse_ok("<skip_summary>\n  routine reads only\n</skip_summary>");
    assert_eq!(parsed.skipped.as_deref(), Some("routine reads only"));
}

#[test]
fn skip_summary_without_reason() {
    for text in [
        "<skip_summary/>",
        "<SKIP_SUMMARY />",
        "<skip_summary></skip_summary>",
        "<skip_summary>",
    ] {
        assert_eq!(parse_ok(text).skipped.as_deref(), Some(""), "{text}");
    }
}

#[test]
fn skip_summary_with_single_quoted_and_unquoted_reason() {
    assert_eq!(
        parse_ok("<skip_summary reason='a > b'/>").skipped.as_deref(),
        Some("a > b")
    );
    assert_eq!(
        parse_ok("<skip_summary REASON=trivial/>").skipped.as_deref(),
        Some("trivial")
    );
}

#[test]
fn skip_reason_attribute_may_hold_angle_brackets() {
    let parsed = parse_ok("<skip_summary reason=\"only <ls> ran\"/>");
    assert_eq!(parsed.skipped.as_deref(), Some("only <ls> ran"));
}

#[test]
fn stray_quote_in_an_attribute_does_not_swallow_the_block() {
    let text = "<observation id=\"1><title>He said \"hi\"</title><facts><fact>a</fact></facts></observation>";
    let observation = only_observation(text);
    assert_eq!(observation.title, "He said \"hi\"");
    assert_eq!(observation.facts, ["a"]);
}

// ---- summaries ----

#[test]
fn blank_summary_is_absent() {
    let text = "<summary><request> </request><learned/></summary>";
    assert!(parse(text).is_err());
    let text = format!("{FULL_OBSERVATION}<summary>\n</summary>");
    assert_eq!(parse_ok(&text).summary, None);
}

#[test]
fn unclosed_summary_keeps_its_closed_fields() {
    let summary = summary_of("<summary><request>Add X</request><learned>Y is");
    assert_eq!(summary.request, "Add X");
    assert_eq!(summary.learned, "Y is");
}

// ---- bounds ----

#[test]
fn text_fields_are_capped_on_a_char_boundary() {
    let long = "é".repeat(MAX_FIELD_CHARS + 100);
    let text = format!("<observation><title>{long}</title><narrative>{long}</narrative></observation>");
    let observation = only_observation(&text);
    assert_eq!(observation.title.chars().count(), MAX_FIELD_CHARS);
    assert_eq!(observation.narrative.chars().count(), MAX_FIELD_CHARS);
    let summary = summary_of(&format!("<summary><notes>{long}</notes></summary>"));
    assert_eq!(summary.notes.chars().count(), MAX_FIELD_CHARS);
}

#[test]
fn lists_are_capped() {
    let facts: String = (0..MAX_LIST_ITEMS + 10)
        .map(|i| format!("<fact>f{i}</fact>"))
        .collect();
    let files: String = (0..MAX_LIST_ITEMS + 10).map(|i| format!("f{i}.rs\n")).collect();
    let text = format!(
        "<observation><title>t</title><facts>{facts}</facts><files_read>{files}</files_read></observation>"
    );
    let observation = only_observation(&text);
    assert_eq!(observation.facts.len(), MAX_LIST_ITEMS);
    assert_eq!(observation.facts.last().map(String::as_str), Some("f49"));
    assert_eq!(observation.files_read.len(), MAX_LIST_ITEMS);
}

#[test]
fn observations_are_capped() {
    let text: String = (0..MAX_OBSERVATIONS + 5)
        .map(|i| format!("<observation><title>{i}</title></observation>"))
        .collect();
    let parsed = parse_ok(&text);
    assert_eq!(parsed.observations.len(), MAX_OBSERVATIONS);
    assert_eq!(
        parsed.observations[MAX_OBSERVATIONS - 1].title,
        (MAX_OBSERVATIONS - 1).to_string()
    );
}

// ---- errors ----

#[test]
fn answer_with_nothing_usable_is_a_parse_error() {
    for text in [
        "",
        "I could not find anything.",
        "<observation></observation>",
        "<observation><type>bugfix</type></observation>",
        "<summary></summary>",
    ] {
        let error = parse(text).expect_err(text);
        assert_eq!(error.class, ErrorClass::ParseError, "{text}");
    }
}

#[test]
fn parse_error_quotes_the_start_of_the_answer() {
    let error = parse("The model said something else entirely.").expect_err("no blocks");
    assert!(
        error.message.contains("The model said something else entirely."),
        "{}",
        error.message
    );

    let long = format!("{}{}", "ü".repeat(199), "xyz".repeat(1000));
    let error = parse(&long).expect_err("no blocks");
    let quoted = format!("{}x", "ü".repeat(199));
    assert!(error.message.contains(&quoted), "{}", error.message);
    assert!(!error.message.contains("xyzxyz"), "{}", error.message);
    assert!(error.message.chars().count() < 300);
}

// ---- pathological input ----

/// Inputs built to trigger quadratic rescans or deep nesting; each must
/// simply return.
fn pathological_inputs() -> Vec<String> {
    vec![
        "<".repeat(200_000),
        "<observation>".repeat(20_000),
        "</observation>".repeat(20_000),
        "<observation><title>".repeat(20_000),
        "<facts><fact>".repeat(20_000),
        format!("<observation><title>t</title>{}", "<facts>".repeat(50_000)),
        "<![CDATA[".repeat(20_000),
        "<!--".repeat(50_000),
        "<!-- -->".repeat(50_000),
        "&".repeat(200_000),
        "&#x".repeat(70_000),
        "<title ".repeat(30_000),
        "<title a=\"".repeat(30_000),
        "<observation a='>".repeat(20_000),
        format!(
            "<observation><title>{}</title></observation>",
            "a ".repeat(500_000)
        ),
        format!("<observation><narrative>{}</narrative>", "x\n".repeat(300_000)),
        format!(
            "<observation><title>t</title><facts>{}</facts>",
            "- a\n".repeat(100_000)
        ),
        format!(
            "<observation><title>t</title><concepts>{}</concepts>",
            ",".repeat(200_000)
        ),
        "<skip_summary reason=\"".repeat(20_000),
        "```".repeat(50_000),
    ]
}

#[test]
fn pathological_inputs_return() {
    for input in pathological_inputs() {
        let _ = parse(&input);
    }
}

#[test]
fn many_unclosed_observations_yield_at_most_the_cap() {
    let text = "<observation><title>t</title>".repeat(10_000);
    assert_eq!(parse_ok(&text).observations.len(), MAX_OBSERVATIONS);
}
