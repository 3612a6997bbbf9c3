//! Tests of the heuristic provider: what it extracts, that it is
//! deterministic, escapes its text, and that its XML parses back.

use cairn_shared::jobs::JobType;
use serde_json::json;

use super::*;
use crate::generation::material::EventRecord;
use crate::generation::parse::parse;
use crate::generation::prompt::fixtures::{
    bugfix_turn, edit, event, in_turn, material, read, stop, user_prompt,
};
use crate::generation::prompt::{Budget, build};

async fn complete(material: &Material) -> Completion {
    let prompt = build(material, &Budget::default());
    let request = Request {
        system: prompt.system,
        user: &prompt.user,
        material,
        summarise_turn: false,
        max_output_tokens: 1_000,
    };
    Heuristic
        .complete(request)
        .await
        .expect("the heuristic never fails")
}

#[tokio::test]
async fn bugfix_turn_gives_files_type_and_the_failing_command() {
    let m = material(JobType::Observations, bugfix_turn("fix the parser"));
    let text = complete(&m).await.text;
    for needle in [
        "<type>bugfix</type>",
        "<title>fix the parser</title>",
        "<subtitle>heuristic extract: 2 commands, 1 file modified, 1 file read</subtitle>",
        "<fact>Ran `cargo test`: failed, then passed</fact>",
        "<fact>Error: thread 'parse' panicked at src/parse.rs:9</fact>",
        "<concept>problem-solution</concept>",
        "<files_read>\n    <file>src/parse.rs</file>\n  </files_read>",
        "<files_modified>\n    <file>src/parse.rs</file>\n  </files_modified>",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert_eq!(text.matches("<observation>").count(), 1);
}

#[test]
fn types_follow_modifications_and_fixes() {
    let change = vec![
        user_prompt("rename"),
        crate::generation::prompt::fixtures::edit("a.rs"),
    ];
    assert!(answer(&material(JobType::Observations, change)).contains("<type>change</type>"));
    let failing = vec![
        read("a.rs"),
        crate::generation::prompt::fixtures::bash("make", true),
    ];
    let text = answer(&material(JobType::Observations, failing));
    assert!(
        text.contains("<type>discovery</type>") && text.contains("<fact>Ran `make`: failed</fact>"),
        "{text}"
    );
    assert!(
        text.contains("<title>Ran make</title>"),
        "title from the command without a prompt: {text}"
    );
}

#[tokio::test]
async fn answers_are_deterministic() {
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let m = material(kind, bugfix_turn("fix the parser"));
        let (a, b) = (complete(&m).await, complete(&m.clone()).await);
        assert_eq!(a.text, b.text);
        assert_eq!(
            (a.usage.input_tokens, a.usage.output_tokens),
            (b.usage.input_tokens, b.usage.output_tokens)
        );
    }
}

#[test]
fn no_tool_activity_is_skipped() {
    assert_eq!(
        answer(&material(JobType::Observations, vec![])),
        "<skip_summary reason=\"no tool activity\"/>\n"
    );
    let talk = vec![user_prompt("hello"), stop("hi")];
    assert!(answer(&material(JobType::Observations, talk.clone())).starts_with("<skip_summary"));
    assert!(
        answer(&material(JobType::TurnSummary, vec![]))
            .starts_with("<skip_summary reason=\"nothing recorded\"")
    );
    assert!(answer(&material(JobType::TurnSummary, talk)).starts_with("<summary>"));
}

#[test]
fn turn_summary_request_is_the_prompt() {
    let text = answer(&material(JobType::TurnSummary, bugfix_turn("fix the parser")));
    let summary = parse(&text).expect("parses").summary.expect("a summary");
    assert_eq!(summary.request, "fix the parser");
    assert!(
        summary.investigated.contains("cargo test") && !summary.investigated.contains("src/parse.rs"),
        "a file read and modified is named once, as modified: {}",
        summary.investigated
    );
    assert_eq!(
        summary.completed,
        "Fixed the parser.\nAll green.\nModified: src/parse.rs."
    );
    assert!(
        summary
            .learned
            .contains("thread 'parse' panicked at src/parse.rs:9"),
        "{}",
        summary.learned
    );
    assert_eq!(summary.next_steps, "Next: add a fuzz test for headers.");
    assert_eq!(summary.notes, "heuristic summary (no model)");
}

#[test]
fn session_summary_requests_every_prompt() {
    let mut events = in_turn(bugfix_turn("first request"), 1);
    events.extend(in_turn(
        vec![user_prompt("second request"), read("b.rs"), stop("done")],
        2,
    ));
    let summary = parse(&answer(&material(JobType::SessionSummary, events)))
        .unwrap()
        .summary
        .unwrap();
    assert_eq!(summary.request, "first request\nsecond request");
    assert_eq!(summary.next_steps, "", "from the last message only");
}

#[test]
fn prompt_text_is_escaped() {
    let text = answer(&material(
        JobType::Observations,
        bugfix_turn("fix Vec<u8> parsing & more"),
    ));
    assert!(
        text.contains("<title>fix Vec&lt;u8&gt; parsing &amp; more</title>"),
        "{text}"
    );
    assert!(!text.contains("Vec<u8>"));
    let summary = answer(&material(
        JobType::TurnSummary,
        bugfix_turn("fix Vec<u8> parsing"),
    ));
    assert!(
        summary.contains("<request>fix Vec&lt;u8&gt; parsing</request>"),
        "{summary}"
    );
}

#[test]
fn observations_parse_and_round_trip_the_files() {
    let mut events = in_turn(bugfix_turn("fix <the> parser"), 1);
    events.extend(in_turn(vec![user_prompt("look around"), read("docs/a&b.md")], 2));
    let parsed = parse(&answer(&material(JobType::Observations, events))).expect("parses");
    assert_eq!(parsed.observations.len(), 2);
    let (first, second) = (&parsed.observations[0], &parsed.observations[1]);
    assert_eq!(
        (first.kind.as_str(), first.title.as_str()),
        ("bugfix", "fix <the> parser")
    );
    assert_eq!(first.files_read, vec!["src/parse.rs"]);
    assert_eq!(first.files_modified, vec!["src/parse.rs"]);
    assert!(first.subtitle.starts_with("heuristic extract:"));
    assert_eq!(
        (second.kind.as_str(), second.files_read.clone()),
        ("discovery", vec!["docs/a&b.md".to_string()])
    );
    assert!(second.files_modified.is_empty());
    let skipped = parse(&answer(&material(JobType::Observations, vec![]))).unwrap();
    assert_eq!(skipped.skipped.as_deref(), Some("no tool activity"));
}

#[tokio::test]
async fn usage_names_the_heuristic_and_estimates_tokens() {
    let m = material(JobType::Observations, bugfix_turn("fix the parser"));
    let prompt = build(&m, &Budget::default());
    let completion = complete(&m).await;
    let usage = completion.usage;
    assert_eq!(
        (usage.provider.as_str(), usage.model.as_str()),
        ("heuristic", "heuristic-v1")
    );
    assert_eq!(usage.input_tokens, estimate_tokens(&prompt.user) as u64);
    assert_eq!(usage.output_tokens, estimate_tokens(&completion.text) as u64);
    assert_eq!((usage.cached_tokens, usage.cache_creation_tokens), (0, 0));
}

#[test]
fn odd_payloads_never_panic() {
    let odd: Vec<EventRecord> = [
        json!(null),
        json!("text"),
        json!({"tool_input": "x", "tool_response": [1], "error": 3}),
        json!({"tool_input": {"command": 5, "file_path": ["a"]}, "tool_response": {"stderr": null, "exit_code": "x"}}),
        json!({"command": "ls", "output": {"deep": {"er": {"est": 1}}}}),
    ]
    .into_iter()
    .map(|payload| event("PostToolUse", Some("Bash"), payload))
    .collect();
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let text = answer(&material(kind, odd.clone()));
        assert!(parse(&text).is_ok(), "{text}");
    }
}

#[test]
fn turn_summary_completed_is_the_final_message_redacted_and_trimmed() {
    let secret = "Hunter2Secret";
    let mut events = bugfix_turn("load the dump");
    events.pop();
    events.push(stop(&format!(
        "Loaded the dump with `mysql -u root -p{secret} shop` because the fixtures were stale.\nNext: drop the old fixtures."
    )));
    let text = answer(&material(JobType::TurnSummary, events.clone()));
    assert!(!text.contains(secret), "{text}");
    let summary = parse(&text).unwrap().summary.unwrap();
    assert!(
        summary.completed.starts_with(
            "Loaded the dump with `mysql -u root -p[REDACTED:cli_password] shop` because the fixtures were stale."
        ),
        "{}",
        summary.completed
    );
    assert!(
        !summary.completed.contains("Next:"),
        "next steps stay in next_steps"
    );
    assert_eq!(summary.next_steps, "Next: drop the old fixtures.");

    // A long message is cut, keeping its start and its end.
    let long = format!("Started here. {} Ended here.", "word ".repeat(2_000));
    events.pop();
    events.push(stop(&long));
    let summary = parse(&answer(&material(JobType::TurnSummary, events)))
        .unwrap()
        .summary
        .unwrap();
    let said = summary.completed.lines().next().unwrap();
    assert!(said.chars().count() <= 1_500, "{} chars", said.chars().count());
    assert!(
        said.starts_with("Started here.") && said.ends_with("Ended here."),
        "{said}"
    );
}

#[test]
fn session_summary_completed_gives_each_turn_final_message() {
    let mut events = Vec::new();
    for n in 1..=7 {
        events.extend(in_turn(
            vec![
                user_prompt(&format!("request {n}")),
                read("a.rs"),
                stop(&format!("Did thing {n}.")),
            ],
            n,
        ));
    }
    let summary = parse(&answer(&material(JobType::SessionSummary, events)))
        .unwrap()
        .summary
        .unwrap();
    assert_eq!(
        summary.completed,
        "(final messages of 2 earlier turns left out)\nDid thing 3.\nDid thing 4.\nDid thing 5.\nDid thing 6.\nDid thing 7."
    );
}

#[test]
fn a_title_names_its_file_relative_to_the_repository() {
    let events = vec![read("/work/cairn/deploy/pipeline.yaml"), stop("Read it.")];
    let parsed = parse(&answer(&material(JobType::Observations, events))).unwrap();
    assert_eq!(parsed.observations[0].title, "Read deploy/pipeline.yaml");
    assert_eq!(
        parsed.observations[0].files_read,
        vec!["/work/cairn/deploy/pipeline.yaml"]
    );
}

#[test]
fn file_lists_have_no_duplicates_and_text_names_files_relative_to_the_repository() {
    let events = vec![
        user_prompt("tidy"),
        read("/work/cairn/src/a.rs"),
        read("src/a.rs"),
        read("./src/a.rs"),
        read("src/b.rs"),
        edit("src/b.rs"),
        edit("/work/cairn/src/b.rs"),
        edit("./src//b.rs"),
        stop("Tidied b."),
    ];
    let parsed = parse(&answer(&material(JobType::Observations, events.clone()))).unwrap();
    let observation = &parsed.observations[0];
    assert_eq!(observation.files_read, vec!["/work/cairn/src/a.rs", "src/b.rs"]);
    assert_eq!(observation.files_modified, vec!["src/b.rs"]);
    // The text names files relative to the repository; the columns keep the spelling.
    assert!(
        observation
            .facts
            .contains(&"Read: src/a.rs, src/b.rs".to_string()),
        "{:?}",
        observation.facts
    );
    assert!(
        observation.subtitle.ends_with("1 file modified, 2 files read"),
        "{}",
        observation.subtitle
    );
    for kind in [JobType::TurnSummary, JobType::SessionSummary] {
        let summary = parse(&answer(&material(kind, events.clone())))
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(summary.investigated, "Read: src/a.rs.");
        assert_eq!(summary.completed, "Tidied b.\nModified: src/b.rs.");
    }
}

#[tokio::test]
async fn a_turn_ending_observation_job_gets_observations_and_the_turns_summary() {
    let m = material(JobType::Observations, bugfix_turn("fix the parser"));
    let plain = parse(&answer_with(&m, false)).unwrap();
    assert!(!plain.observations.is_empty() && plain.summary.is_none());
    let request = Request {
        system: "",
        user: "",
        material: &m,
        summarise_turn: true,
        max_output_tokens: 1_000,
    };
    let text = Heuristic.complete(request).await.unwrap().text;
    let both = parse(&text).unwrap();
    assert_eq!(both.observations, plain.observations);
    let summary = both.summary.expect("the turn's summary");
    assert_eq!(summary.request, "fix the parser");
    assert!(summary.completed.starts_with("Fixed the parser."), "{summary:?}");
    // A summary job's answer is unchanged by the flag.
    let turn = material(JobType::TurnSummary, bugfix_turn("fix the parser"));
    assert_eq!(answer_with(&turn, true), answer(&turn));
}
