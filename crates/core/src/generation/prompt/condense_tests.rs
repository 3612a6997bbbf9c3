//! The digest rules, one tool kind at a time, and the planted facts
//! (an error in a long failing output, a config value in a file read, the
//! lines an edit and an error point at, a decision in the last message, a
//! changed file and why) that must reach the prompt.

use cairn_shared::jobs::JobType;
use serde_json::{Value, json};

use super::*;
use crate::generation::prompt::fixtures::{event, material, stop, user_prompt};
use crate::generation::prompt::{Budget, Options, Style, build_with};

const CWD: &str = "/work/cairn";

fn tool(name: &str, input: Value, response: Value) -> EventRecord {
    event(
        "PostToolUse",
        Some(name),
        json!({"tool_input": input, "tool_response": response}),
    )
}

fn read_of(path: &str, content: &str) -> EventRecord {
    tool(
        "Read",
        json!({"file_path": format!("{CWD}/{path}")}),
        json!({"type": "text", "file": {"filePath": format!("{CWD}/{path}"), "content": content}}),
    )
}

/// ~8 KB of Rust, line `n` reading `// line n`.
fn long_source() -> String {
    (1..=300)
        .map(|n| format!("    let value_{n} = compute({n}); // line {n}\n"))
        .collect()
}

fn alone(event: &EventRecord) -> String {
    condense(1, event, &Pointers::of(std::slice::from_ref(event)), Some(CWD))
}

#[test]
fn a_long_read_is_path_size_and_the_lines_edits_and_errors_point_at() {
    let source = long_source();
    let read = read_of("src/calc.rs", &source);
    let edit = tool(
        "Edit",
        json!({"file_path": format!("{CWD}/src/calc.rs"),
               "old_string": "    let value_120 = compute(120); // line 120\n    let value_121 = compute(121); // line 121",
               "new_string": "    let value_120 = compute_checked(120)?; // line 120\n    let value_121 = compute(121); // line 121"}),
        json!({"originalFile": source}),
    );
    let failure = event(
        "PostToolUseFailure",
        Some("Bash"),
        json!({"tool_input": {"command": "cargo build"},
               "error": "Exit code 101\nerror[E0308]: mismatched types\n  --> src/calc.rs:250:9\n"}),
    );
    let events = [read.clone(), edit, failure];
    let text = condense(1, &read, &Pointers::of(&events), Some(CWD));
    assert!(text.starts_with("### 1. Read src/calc.rs (300 lines, "), "{text}");
    assert!(text.contains("120|     let value_120 = compute(120)"), "{text}");
    for n in 248..=252 {
        assert!(
            text.contains(&format!("{n}|     let value_{n} ")),
            "line {n}: {text}"
        );
    }
    assert!(
        !text.contains("value_60 "),
        "unpointed lines are left out: {text}"
    );
    assert!(text.chars().count() < 1_700, "{}", text.chars().count());
}

#[test]
fn a_short_file_is_whole_and_a_config_keeps_its_settings() {
    let short = alone(&read_of("src/lib.rs", "pub mod a;\npub mod b;\n"));
    assert_eq!(
        short,
        "### 1. Read src/lib.rs (2 lines, 22 chars)\npub mod a;\npub mod b;"
    );
    let mut config = String::new();
    for n in 0..60 {
        config.push_str(&format!(
            "# The setting number {n}, explained at length for the reader.\n"
        ));
        config.push_str(&format!("setting_{n} = {}\n", n * 7));
    }
    config.push_str("claim_batch_size = 17\n");
    let text = alone(&read_of("config/generator.toml", &config));
    assert!(text.contains("setting_30 = 210"), "{text}");
    assert!(text.contains("claim_batch_size = 17"), "{text}");
    assert!(!text.contains("explained at length"), "{text}");
    // A config file's template is read as a config file too; source is not.
    for template in [
        "config/ledger.env.example",
        "deploy/values.yaml.sample",
        ".env.template",
    ] {
        let text = alone(&read_of(template, &config));
        assert!(text.contains("setting_30 = 210"), "{template}: {text}");
    }
    let text = alone(&read_of("src/example.rs", &config));
    assert!(!text.contains("setting_30 = 210"), "{text}");
}

#[test]
fn a_long_command_output_keeps_head_notable_lines_and_tail() {
    let mut stdout = String::from("   Compiling cairn v0.1.0\n");
    for n in 0..200 {
        stdout.push_str(&format!("test tests::case_{n} ... ok\n"));
    }
    stdout.push_str("thread 'tests::lease' panicked at src/lease.rs:41:9:\n");
    stdout.push_str("lease token lt-7 does not match the row's token\n");
    for n in 200..400 {
        stdout.push_str(&format!("test tests::case_{n} ... ok\n"));
    }
    stdout.push_str("test result: FAILED. 399 passed; 1 failed; 0 ignored\n");
    let bash = event(
        "PostToolUseFailure",
        Some("Bash"),
        json!({"tool_input": {"command": "cargo test --workspace"}, "error": format!("Exit code 101\n{stdout}")}),
    );
    let text = alone(&bash);
    assert!(
        text.starts_with("### 1. Bash: cargo test --workspace [failed, exit 101]\n   Compiling cairn"),
        "{text}"
    );
    assert!(text.contains("panicked at src/lease.rs:41:9"), "{text}");
    assert!(
        text.contains("lease token lt-7 does not match the row's token"),
        "{text}"
    );
    assert!(
        text.contains("test result: FAILED. 399 passed; 1 failed"),
        "{text}"
    );
    assert!(text.contains("lines]…"), "{text}");
    assert!(!text.contains("case_100 "), "{text}");
    assert!(text.chars().count() <= 1_900, "{}", text.chars().count());
    let ok = tool(
        "Bash",
        json!({"command": "cargo fmt --check"}),
        json!({"stdout": "", "stderr": "", "interrupted": false}),
    );
    assert_eq!(alone(&ok), "### 1. Bash: cargo fmt --check");
}

#[test]
fn grep_and_glob_are_pattern_count_and_first_hits() {
    let hits: Vec<String> = (1..=30)
        .map(|n| format!("src/m{n}.rs:{n}:fn check_{n}() {}", "x".repeat(160)))
        .collect();
    let grep = tool(
        "Grep",
        json!({"pattern": "fn check_", "path": CWD}),
        json!({"mode": "content", "content": hits.join("\n"), "numLines": 30, "numFiles": 30}),
    );
    let text = alone(&grep);
    assert!(
        text.starts_with("### 1. Grep \"fn check_\": 30 hits in 30 files\nsrc/m1.rs:1:fn check_1()"),
        "{text}"
    );
    assert!(
        text.contains("src/m5.rs:5:") && !text.contains("src/m6.rs:6:"),
        "{text}"
    );
    assert!(text.ends_with("(+25 more)"), "{text}");
    let names: Vec<String> = (1..=12).map(|n| format!("{CWD}/src/f{n}.rs")).collect();
    let glob = tool(
        "Glob",
        json!({"pattern": "src/**/*.rs"}),
        json!({"filenames": names, "numFiles": 12}),
    );
    let text = alone(&glob);
    assert!(
        text.starts_with("### 1. Glob \"src/**/*.rs\": 12 files\nsrc/f1.rs\n"),
        "{text}"
    );
    assert!(text.ends_with("src/f8.rs\n(+4 more)"), "{text}");
}

#[test]
fn an_edit_is_its_diff_and_a_todo_write_its_items() {
    let old = "fn a() {}\nfn b() {\n    old();\n}\nfn c() {}";
    let new =
        "fn a() {}\nfn b() {\n    new();\n    // Retried jobs must not reuse the lease token.\n}\nfn c() {}";
    let edit = tool(
        "Edit",
        json!({"file_path": format!("{CWD}/src/b.rs"), "old_string": old, "new_string": new}),
        json!({"originalFile": "x".repeat(20_000)}),
    );
    assert_eq!(
        alone(&edit),
        "### 1. Edit src/b.rs\n-     old();\n+     new();\n+     // Retried jobs must not reuse the lease token."
    );
    let todo = tool(
        "TodoWrite",
        json!({"todos": [{"content": "Fix the lease", "status": "completed", "activeForm": "Fixing"},
                         {"content": "Add a test", "status": "in_progress", "activeForm": "Adding"},
                         {"content": "Document it", "status": "pending", "activeForm": "Documenting"}]}),
        json!({"oldTodos": [], "newTodos": []}),
    );
    assert_eq!(
        alone(&todo),
        "### 1. TodoWrite\n[x] Fix the lease\n[>] Add a test\n[ ] Document it"
    );
}

#[test]
fn planted_facts_survive_into_the_combined_prompt_and_routine_events_do_not() {
    let mut config = String::new();
    for n in 0..40 {
        config.push_str(&format!("# comment {n}\nkey_{n} = {n}\n"));
        if n == 20 {
            config.push_str("claim_batch_size = 23\n");
        }
    }
    let mut output = String::new();
    for n in 0..300 {
        output.push_str(&format!("test t{n} ... ok\n"));
        if n == 150 {
            output.push_str("thread 't150' panicked at src/lease.rs:9:5:\nlease token lt-949 does not match the row's token\n");
        }
    }
    let events = vec![
        user_prompt("fix the lease check"),
        tool(
            "Bash",
            json!({"command": "ls src"}),
            json!({"stdout": "a.rs\nb.rs", "stderr": ""}),
        ),
        read_of("config/generator.toml", &config),
        event(
            "PostToolUseFailure",
            Some("Bash"),
            json!({"tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{output}")}),
        ),
        tool(
            "Edit",
            json!({"file_path": format!("{CWD}/src/lease.rs"), "old_string": "check(token)",
                   "new_string": "check(token)?; // Retried jobs must not reuse the lease token of attempt 4."}),
            json!({}),
        ),
        stop(
            "Fixed. Decided to keep the lease at 27 s rather than shorten it, because slow providers would lose their claim.",
        ),
    ];
    let m = material(JobType::Observations, events);
    let prompt = build_with(
        &m,
        &Budget::default(),
        &Options {
            style: Style::Compact,
            summarise_turn: true,
            turn_summaries: &[],
        },
    );
    for fact in [
        "claim_batch_size = 23",
        "lease token lt-949 does not match the row's token",
        "keep the lease at 27 s",
        "src/lease.rs",
        "must not reuse the lease token of attempt 4",
    ] {
        assert!(
            prompt.user.contains(fact),
            "{fact} missing from:\n{}",
            prompt.user
        );
    }
    assert!(
        prompt
            .user
            .starts_with("Job: observations and summary of one agent turn\n"),
        "{}",
        prompt.user
    );
    assert!(
        prompt.user.contains("(left out as routine: ls src)"),
        "{}",
        prompt.user
    );
    assert!(!prompt.user.contains("b.rs"), "{}", prompt.user);
    assert!(
        prompt.user.contains("## Last assistant message\nFixed."),
        "{}",
        prompt.user
    );
    assert_eq!(prompt.system, crate::generation::prompt::system_compact::COMBINED);
}
