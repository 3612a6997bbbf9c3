//! Tests of `build` across job kinds: determinism, stable system prefixes,
//! budgets, and what each prompt must contain.

use cairn_shared::jobs::JobType;
use serde_json::json;

use super::fixtures::{bash, bugfix_turn, edit, event, in_turn, material, read, stop, user_prompt};
use super::*;

/// What a user part may exceed `total_chars` by.
const SLACK: usize = 64;

fn within(user: &str, budget: &Budget) -> bool {
    user.chars().count() <= budget.total_chars + SLACK && user.len() <= budget.total_chars + SLACK
}

#[test]
fn build_is_deterministic() {
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let m = material(kind, bugfix_turn("fix the parser"));
        let (a, b) = (
            build(&m, &Budget::default()),
            build(&m.clone(), &Budget::default()),
        );
        assert_eq!((a.system, a.user), (b.system, b.user));
    }
}

#[test]
fn system_prefix_is_identical_across_materials_of_a_kind() {
    let one = material(JobType::Observations, bugfix_turn("fix the parser"));
    let other = material(
        JobType::Observations,
        vec![user_prompt("other"), read("README.md")],
    );
    let (a, b) = (build(&one, &Budget::default()), build(&other, &Budget::default()));
    assert_ne!(a.user, b.user);
    assert_eq!(a.system, b.system);
    assert_eq!(a.system, system::OBSERVATIONS);
    let turn = build(
        &material(JobType::TurnSummary, bugfix_turn("x")),
        &Budget::default(),
    );
    let session = build(
        &material(JobType::SessionSummary, vec![read("y")]),
        &Budget::default(),
    );
    assert_eq!(turn.system, session.system);
    assert_eq!(turn.system, system::SUMMARY);
    assert!(!system::OBSERVATIONS.contains("fix the parser") && !system::SUMMARY.contains("cairn\n"));
}

#[test]
fn observation_prompt_contains_prompt_header_and_tool_names() {
    let user = build(
        &material(JobType::Observations, bugfix_turn("fix Vec<u8> parsing")),
        &Budget::default(),
    )
    .user;
    for needle in [
        "Job: observations for one agent turn",
        "Project: cairn",
        "Agent: claude-code",
        "Working directory: /work/cairn",
        "## User prompt\nfix Vec<u8> parsing",
        "### 1. Read src/parse.rs (1 lines, 12 chars)\nfn main() {}",
        "### 2. Bash: cargo test [failed, exit 101]\nthread 'parse' panicked at src/parse.rs:9",
        "### 3. Edit src/parse.rs\n- a\n+ b",
        "### 4. Bash: cargo test\ntest result: ok. 4 passed; 0 failed",
        "message:\nFixed the parser.",
    ] {
        assert!(user.contains(needle), "missing {needle:?} in\n{user}");
    }
    assert_eq!(
        user.matches("fix Vec<u8> parsing").count(),
        1,
        "the prompt is not repeated as an event"
    );
}

#[test]
fn huge_event_respects_both_budgets() {
    let huge = event(
        "PostToolUse",
        Some("Bash"),
        json!({"tool_input": {"command": "cat log"}, "tool_response": {"stdout": format!("START{}END", "z".repeat(2_000_000))}}),
    );
    let m = material(JobType::Observations, vec![user_prompt("why is it slow"), huge]);
    for budget in [
        Budget::default(),
        Budget {
            per_event_chars: 100_000,
            total_chars: 5_000,
        },
    ] {
        let user = build(&m, &budget).user;
        assert!(within(&user, &budget), "{} > {}", user.len(), budget.total_chars);
        assert!(user.contains("why is it slow") && user.contains("START") && user.contains("chars elided"));
    }
}

#[test]
fn five_hundred_events_keep_ends_and_say_how_many_were_left_out() {
    let mut events = vec![user_prompt("big refactor")];
    events.extend((0..500).map(|i| bash(&format!("step-{i:03} {}", "w".repeat(300)), i % 7 == 0)));
    let m = material(JobType::Observations, events);
    let budget = Budget::default();
    let user = build(&m, &budget).user;
    assert!(within(&user, &budget), "{}", user.len());
    assert!(user.contains("big refactor") && user.contains("step-000") && user.contains("step-499"));
    let kept = user.matches("### ").count();
    assert!(kept < 500);
    assert!(
        user.contains(&format!("[… {} events from the middle left out", 500 - kept)),
        "{user}"
    );
}

#[test]
fn multibyte_events_stay_within_budget_in_chars() {
    let text = "日本語のテキスト🦀".repeat(20_000);
    let events = (0..50).map(|_| {
        event(
            "PostToolUse",
            Some("Bash"),
            json!({"tool_input": {"command": text}}),
        )
    });
    let m = material(JobType::Observations, events.collect());
    let budget = Budget {
        per_event_chars: 1_000,
        total_chars: 8_000,
    };
    let user = build(&m, &budget).user;
    assert!(
        user.chars().count() <= budget.total_chars,
        "{}",
        user.chars().count()
    );
}

#[test]
fn turn_summary_lists_tools_in_brief_and_the_last_message() {
    let user = build(
        &material(JobType::TurnSummary, bugfix_turn("fix the parser")),
        &Budget::default(),
    )
    .user;
    for needle in [
        "Job: summary of one agent turn",
        "## User prompt\nfix the parser",
        "## Tool activity (4 tool events)\n- Read: src/parse.rs\n- Bash: cargo test [failed]\n- Edit: src/parse.rs\n- Bash: cargo test\n",
        "## Last assistant message\nFixed the parser.",
    ] {
        assert!(user.contains(needle), "missing {needle:?} in\n{user}");
    }
    assert!(!user.contains("old_string"), "no full events in a summary");
}

fn session_events(turns: i32) -> Vec<crate::generation::material::EventRecord> {
    (1..=turns)
        .flat_map(|n| {
            let turn = vec![
                user_prompt(&format!("request number {n}")),
                read(&format!("src/file{n}.rs")),
                edit(&format!("src/file{n}.rs")),
                stop(&format!("finished turn {n}")),
            ];
            in_turn(turn, n)
        })
        .collect()
}

#[test]
fn session_summary_covers_every_turn_when_small() {
    let user = build(
        &material(JobType::SessionSummary, session_events(5)),
        &Budget::default(),
    )
    .user;
    assert!(user.contains("Turns: 5"));
    for n in 1..=5 {
        for needle in [
            format!("### Turn {n}\nprompt: request number {n}"),
            format!("files modified: src/file{n}.rs"),
            format!("last assistant message: finished turn {n}"),
        ] {
            assert!(user.contains(&needle), "missing {needle:?} in\n{user}");
        }
    }
    assert!(user.contains("tools: Edit: 1, Read: 1"), "{user}");
}

#[test]
fn session_summary_prefers_the_newest_turns() {
    let budget = Budget {
        per_event_chars: 4_000,
        total_chars: 3_000,
    };
    let user = build(&material(JobType::SessionSummary, session_events(200)), &budget).user;
    assert!(within(&user, &budget));
    assert!(
        user.contains("request number 200") && !user.contains("request number 1\n"),
        "{user}"
    );
    assert!(user.contains("turns (the oldest) left out"), "{user}");
}

#[test]
fn empty_material_still_builds() {
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let user = build(&material(kind, vec![]), &Budget::default()).user;
        assert!(
            user.starts_with("Job: ") && user.contains("Project: cairn"),
            "{user}"
        );
    }
}

#[test]
fn estimate_tokens_rounds_up() {
    assert_eq!(
        (
            estimate_tokens(""),
            estimate_tokens("abcd"),
            estimate_tokens("abcde")
        ),
        (0, 1, 2)
    );
    assert_eq!(estimate_tokens("ééé"), 1);
}
