//! prompt_tokens: LLM input tokens per 100 tool events, coalesced per turn
//! (as Cairn does) against one provider call per tool event.
//!
//! A realistic Claude Code session is generated in code, deterministically
//! (no randomness): 10 turns, 100 tool events — Reads of 2–8 KB Rust files,
//! Grep and Glob over those files, Edits with old/new strings (and Claude
//! Code's `originalFile` in the response), a Write, `cargo test` with multi-KB
//! stdout, `git diff`, `cargo clippy`, and a few failures (tests, a compile
//! error) — each turn opened by a UserPromptSubmit and closed by a Stop.
//! Every prompt is built by `cairn_generator::prompt::build` with
//! `Budget::default()` and counted with `prompt::estimate_tokens` over system
//! + user:
//! - coalesced: per turn, one observations job (the turn's prompt and all its
//!   tool events, as the ingest path groups them) and one turn summary job;
//! - per event: per tool event, one observations call with the turn's prompt
//!   and that event alone, plus the same turn summary per turn.
//!
//! Also prints how many input tokens are the system prompt, a byte-identical
//! prefix that providers can cache. `--jsonl PATH` writes the session's hook
//! events, one JSON object a line, for inspection.

use std::{collections::BTreeMap, io::Write};

use cairn_generator::{
    material::{EventRecord, Material},
    prompt::{self, Budget},
};
use cairn_shared::jobs::JobType;
use cairn_testkit::cc;
use chrono::{TimeZone, Utc};
use clap::Parser;
use serde_json::{Value, json};
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Also write the session's hook events here as JSONL.
    #[arg(long)]
    jsonl: Option<std::path::PathBuf>,
}

const SESSION: &str = "bench-prompt-tokens";
const ROOT: &str = "/home/dev/cairn";

/// One turn: the user's prompt, its tool calls as letters, the agent's last message.
///
/// G Glob · g Grep · R Read (the next file) · E Edit (the last file read) · W Write ·
/// t `cargo test` passing · T `cargo test` failing · B `cargo build` failing ·
/// c `cargo clippy` · s `git status` · d `git diff` of the turn's edits.
struct Turn {
    prompt: &'static str,
    tools: &'static str,
    message: &'static str,
}

const TURNS: [Turn; 10] = [
    Turn {
        prompt: "`cairn search` ignores --project when --since is given. Find out why and fix it.",
        tools: "gRRRETEtd",
        message: "The --since branch built its own query and dropped the project filter. Both branches now go \
                  through one filter builder; added a test for --since with --project. All tests pass.",
    },
    Turn {
        prompt: "Add a --limit flag to `cairn sessions list`, default 50, with a test.",
        tools: "GRREEEtcd",
        message: "Added --limit (default 50, max 500) to `cairn sessions list`, passed through to the API's \
                  `limit` query parameter, with a test for the default and the cap. Clippy is clean.",
    },
    Turn {
        prompt: "Why does the ingest endpoint answer 413 for a 200 KB Read response? Explain, don't change anything.",
        tools: "gRRRgRRs",
        message: "The body limit is 256 KB but the hook JSON escapes the file content, which grows a 200 KB \
                  file to ~260 KB of JSON. The 413 comes from tower-http's RequestBodyLimit before the \
                  privacy size cap ever runs. Nothing changed.",
    },
    Turn {
        prompt: "Raise the hook body limit to 512 KB and make it configurable with CAIRN_MAX_BODY_BYTES.",
        tools: "gRREEBEtTEtd",
        message: "CAIRN_MAX_BODY_BYTES (default 512 KB) now sets the body limit of the hook routes. The first \
                  build failed on a missing import; one test assumed the old limit and was updated.",
    },
    Turn {
        prompt: "Refactor the privacy redactor so each secret pattern lives in one table. Keep behaviour identical.",
        tools: "GRRRREEEETEttd",
        message: "Secret patterns now live in one `PATTERNS` table with name, regex and replacement; the \
                  redactor loops over it. One test relied on the old order of checks and was fixed by \
                  keeping the order in the table. Behaviour is unchanged; all tests pass.",
    },
    Turn {
        prompt: "Run the full test suite and fix whatever fails.",
        tools: "TgRRETEtd",
        message: "One failure: `time::tests::parses_rfc3339` broke on a leap-second fixture after the chrono \
                  bump. The parser now clamps second 60 to 59 as chrono does. The suite is green.",
    },
    Turn {
        prompt: "Add tracing spans around the generator's claim and complete so we can see their latency.",
        tools: "gRRREEcEtd",
        message: "Added `claim` and `complete` spans with job_id and worker fields; clippy flagged a needless \
                  clone which I removed. Spans show up with RUST_LOG=cairn_generator=debug.",
    },
    Turn {
        prompt: "The sweeper logs 'rescued a job' for jobs that finished normally. Investigate.",
        tools: "gRRgRRRBEtd",
        message: "The heartbeat kept running for a moment after completion and re-extended a lease on a \
                  finished job id, which the sweeper then saw as expired. The heartbeat now stops before the \
                  completion transaction. Added a regression test.",
    },
    Turn {
        prompt: "Document the job state machine transitions in docs/state-machine.md.",
        tools: "GRRRWcs",
        message: "Wrote docs/state-machine.md: a diagram, one table row per transition with its guard, and \
                  why a late completion changes nothing.",
    },
    Turn {
        prompt: "Bump sqlx to 0.9.1 and make sure everything still builds and passes.",
        tools: "RERBEEtTEtd",
        message: "Bumped sqlx to 0.9.1. `query_scalar` now needs AssertSqlSafe for dynamic SQL (two call \
                  sites) and one test compared a changed error message. Everything builds and passes.",
    },
];

/// The workspace's files the session reads and edits, with their sizes in bytes.
const FILES: [(&str, usize); 16] = [
    ("crates/cli/src/search.rs", 5_200),
    ("crates/cli/src/sessions.rs", 3_400),
    ("crates/shared/src/config.rs", 6_100),
    ("crates/shared/src/privacy/redactor.rs", 7_800),
    ("crates/shared/src/privacy/secrets.rs", 4_600),
    ("crates/shared/src/time.rs", 2_300),
    ("crates/shared/src/jobs/state_machine.rs", 8_000),
    ("services/api/src/app.rs", 4_100),
    ("services/api/src/ingest/mod.rs", 6_900),
    ("services/api/src/ingest/write.rs", 5_600),
    ("services/api/src/config.rs", 3_800),
    ("services/generator/src/worker/pool.rs", 2_900),
    ("services/generator/src/worker/sweeper.rs", 2_600),
    ("services/generator/src/worker/heartbeat.rs", 2_100),
    ("services/generator/src/job/write.rs", 7_200),
    ("services/api/src/store/sessions.rs", 4_800),
];

const GREP_PATTERNS: [&str; 6] = [
    "with_context",
    "fn check_",
    "limit",
    "Result<Vec<String>>",
    "HashMap",
    "parse::<u64>",
];
const VERBS: [&str; 8] = [
    "parse", "check", "load", "apply", "render", "merge", "redact", "count",
];
const NOUNS: [&str; 9] = [
    "event", "session", "token", "limit", "job", "lease", "filter", "summary", "payload",
];

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let turns: Vec<Vec<EventRecord>> = (0..TURNS.len()).map(session_turn).collect();
    if let Some(path) = &args.jsonl {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for event in turns.iter().flatten() {
            writeln!(out, "{}", event.payload)?;
        }
    }

    let budget = Budget::default();
    let mut coalesced = Tally::default();
    let mut per_event = Tally::default();
    let mut tool_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut hook_bytes = 0;
    for (number, events) in turns.iter().enumerate() {
        let turn = number as i32 + 1;
        let prompt_event = &events[0];
        let tool_events = &events[1..events.len() - 1];
        for e in tool_events {
            *tool_counts
                .entry(e.tool_name.clone().unwrap_or_default())
                .or_default() += 1;
        }
        hook_bytes += events.iter().map(|e| e.payload.to_string().len()).sum::<usize>();

        let summary = material(JobType::TurnSummary, turn, events.clone());
        let turn_job = material(JobType::Observations, turn, events[..events.len() - 1].to_vec());
        coalesced.add(&turn_job, &budget, false);
        coalesced.add(&summary, &budget, true);
        for event in tool_events {
            let one = material(
                JobType::Observations,
                turn,
                vec![prompt_event.clone(), event.clone()],
            );
            per_event.add(&one, &budget, false);
        }
        per_event.add(&summary, &budget, true);
    }

    let tool_events: usize = tool_counts.values().sum();
    let per_100 = |tokens: usize| tokens as f64 * 100.0 / tool_events as f64;
    let mix: Vec<String> = tool_counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
    println!(
        "session: {} turns, {tool_events} tool events ({}), {} KB of hook JSON",
        TURNS.len(),
        mix.join(", "),
        hook_bytes / 1024
    );
    println!(
        "{:<20} {:>6} {:>13} {:>14} {:>20} {:>10} {:>12}",
        "", "calls", "input tokens", "per 100 tools", "system (cacheable)", "user part", "over budget"
    );
    for (name, t) in [
        ("coalesced (Cairn)", &coalesced),
        ("one call per event", &per_event),
    ] {
        let system = format!(
            "{} ({:.0}%)",
            t.system_tokens,
            t.system_tokens as f64 * 100.0 / t.total() as f64
        );
        println!(
            "{name:<20} {:>6} {:>13} {:>14.0} {system:>20} {:>10} {:>12}",
            t.calls,
            t.total(),
            per_100(t.total()),
            t.user_tokens,
            t.over_budget,
        );
    }
    let ratio = |a: usize, b: usize| a as f64 / b as f64;
    println!(
        "prompt_tokens tool_events={tool_events} coalesced={} per_event={} coalesced_per_100={:.0} \
         per_event_per_100={:.0} ratio={:.2} obs_only_ratio={:.2} user_part_ratio={:.2} coalesced_system={} \
         coalesced_system_pct={:.0} coalesced_over_budget={}",
        coalesced.total(),
        per_event.total(),
        per_100(coalesced.total()),
        per_100(per_event.total()),
        ratio(per_event.total(), coalesced.total()),
        ratio(per_event.observation_tokens, coalesced.observation_tokens),
        ratio(per_event.user_tokens, coalesced.user_tokens),
        coalesced.system_tokens,
        coalesced.system_tokens as f64 * 100.0 / coalesced.total() as f64,
        coalesced.over_budget,
    );
    Ok(())
}

/// Input tokens of a series of provider calls.
#[derive(Default)]
struct Tally {
    calls: usize,
    /// The system prompts: the same text on every call of a kind.
    system_tokens: usize,
    user_tokens: usize,
    /// System + user tokens of observation calls only (no summaries).
    observation_tokens: usize,
    /// Calls whose events did not all fit `Budget::total_chars` (some were left out).
    over_budget: usize,
}

impl Tally {
    fn add(&mut self, material: &Material, budget: &Budget, summary: bool) {
        let built = prompt::build(material, budget);
        let (system, user) = (
            prompt::estimate_tokens(built.system),
            prompt::estimate_tokens(&built.user),
        );
        self.calls += 1;
        self.system_tokens += system;
        self.user_tokens += user;
        self.over_budget += usize::from(built.user.contains("left out to fit the budget"));
        if !summary {
            self.observation_tokens += system + user;
        }
    }

    fn total(&self) -> usize {
        self.system_tokens + self.user_tokens
    }
}

fn material(job_type: JobType, turn: i32, events: Vec<EventRecord>) -> Material {
    Material {
        job_id: Uuid::nil(),
        job_type,
        project: "cairn".into(),
        agent: Some("claude-code".into()),
        cwd: Some(ROOT.into()),
        prompt_number: Some(turn),
        events,
    }
}

/// The events of turn `index`: its prompt, its tool calls, its Stop.
fn session_turn(index: usize) -> Vec<EventRecord> {
    let turn = &TURNS[index];
    let mut events = vec![hook("UserPromptSubmit", json!({ "prompt": turn.prompt }))];
    let (mut reads, mut last_file, mut edits) = (0, index % FILES.len(), Vec::new());
    for (n, tool) in turn.tools.chars().enumerate() {
        let id = format!("toolu_{index:02}_{n:02}");
        let event = match tool {
            'G' => glob(
                &id,
                if index.is_multiple_of(2) {
                    "crates/**/*.rs"
                } else {
                    "services/**/*.rs"
                },
            ),
            'g' => grep(&id, GREP_PATTERNS[(index + n) % GREP_PATTERNS.len()]),
            'R' => {
                last_file = (index * 3 + reads * 5) % FILES.len();
                reads += 1;
                read(&id, last_file)
            }
            'E' => {
                let (event, old, new) = edit(&id, last_file, index + edits.len());
                edits.push((FILES[last_file].0, old, new));
                event
            }
            'W' => write(&id, "docs/state-machine.md"),
            't' => bash(&id, "cargo test --workspace", Ok(test_output(index, false))),
            'T' => bash(&id, "cargo test --workspace", Err(test_output(index, true))),
            'B' => bash(&id, "cargo build --workspace", Err(build_error(last_file))),
            'c' => bash(
                &id,
                "cargo clippy --workspace --all-targets -- -D warnings",
                Ok(clippy()),
            ),
            's' => bash(&id, "git status --short", Ok(git_status(index))),
            'd' => bash(&id, "git diff", Ok(git_diff(&edits))),
            other => unreachable!("unknown tool letter {other:?}"),
        };
        events.push(event);
    }
    events.push(hook(
        "Stop",
        json!({ "last_assistant_message": turn.message, "stop_hook_active": false }),
    ));
    let at = Utc.timestamp_opt(1_700_000_000 + index as i64 * 600, 0).unwrap();
    for (i, event) in events.iter_mut().enumerate() {
        event.prompt_number = Some(index as i32 + 1);
        event.occurred_at = at + chrono::Duration::seconds(i as i64 * 7);
    }
    events
}

/// An event as the ingest path stores it: the whole hook JSON as payload.
fn hook(event_type: &str, extra: Value) -> EventRecord {
    let tool_name = extra["tool_name"].as_str().map(str::to_string);
    EventRecord {
        event_type: event_type.into(),
        tool_name,
        prompt_number: None,
        payload: cc(SESSION, event_type, extra),
        occurred_at: Utc.timestamp_opt(0, 0).unwrap(),
    }
}

fn tool(id: &str, name: &str, input: Value, response: Value) -> EventRecord {
    hook(
        "PostToolUse",
        json!({ "tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": response }),
    )
}

fn read(id: &str, file: usize) -> EventRecord {
    let (path, bytes) = FILES[file];
    let content = source(path, bytes);
    let lines = content.lines().count();
    tool(
        id,
        "Read",
        json!({ "file_path": format!("{ROOT}/{path}") }),
        json!({ "type": "text", "file": { "filePath": format!("{ROOT}/{path}"), "content": content,
                "numLines": lines, "startLine": 1, "totalLines": lines } }),
    )
}

fn glob(id: &str, pattern: &str) -> EventRecord {
    let prefix = pattern.split('/').next().unwrap_or_default();
    let files: Vec<String> = FILES
        .iter()
        .filter(|(p, _)| p.starts_with(prefix))
        .map(|(p, _)| format!("{ROOT}/{p}"))
        .collect();
    tool(
        id,
        "Glob",
        json!({ "pattern": pattern }),
        json!({ "filenames": files, "durationMs": 14, "numFiles": files.len(), "truncated": false }),
    )
}

/// Grep over the session's own files, so its matches are the lines the Reads show.
fn grep(id: &str, pattern: &str) -> EventRecord {
    const HEAD_LIMIT: usize = 50;
    let mut matches = Vec::new();
    for (path, bytes) in FILES {
        for (n, line) in source(path, bytes).lines().enumerate() {
            if line.contains(pattern) {
                matches.push(format!("{path}:{}:{line}", n + 1));
            }
        }
    }
    let files = FILES
        .iter()
        .filter(|(p, _)| matches.iter().any(|m| m.starts_with(p)))
        .count();
    matches.truncate(HEAD_LIMIT);
    tool(
        id,
        "Grep",
        json!({ "pattern": pattern, "path": ROOT, "output_mode": "content", "-n": true, "head_limit": HEAD_LIMIT }),
        json!({ "mode": "content", "numFiles": files, "filenames": [], "content": matches.join("\n"),
                "numLines": matches.len() }),
    )
}

/// Edit number `k` of the session on `file`: a hunk of 6–17 lines, reworked
/// and grown by two lines. Returns the event and the old and new strings.
fn edit(id: &str, file: usize, k: usize) -> (EventRecord, String, String) {
    let (path, bytes) = FILES[file];
    let original = source(path, bytes);
    let lines: Vec<&str> = original.lines().collect();
    let len = 6 + (k * 5) % 12;
    let start = (k * 13) % lines.len().saturating_sub(len).max(1);
    let old = lines[start..(start + len).min(lines.len())].join("\n");
    let mut new_lines: Vec<String> = old.lines().map(|l| l.replace("limit", "max_items")).collect();
    new_lines.insert(1, format!("    tracing::debug!(step = {k}, \"checked {path}\");"));
    new_lines.push("    // Kept in step with the API's validation; see docs/state-machine.md.".into());
    let new = new_lines.join("\n");
    let event = tool(
        id,
        "Edit",
        json!({ "file_path": format!("{ROOT}/{path}"), "old_string": old, "new_string": new, "replace_all": false }),
        json!({ "filePath": format!("{ROOT}/{path}"), "oldString": old, "newString": new,
                "originalFile": original, "userModified": false, "replaceAll": false,
                "structuredPatch": [{ "oldStart": start + 1, "oldLines": len, "newStart": start + 1,
                    "newLines": len + 2, "lines": diff_lines(&old, &new) }] }),
    );
    (event, old, new)
}

fn write(id: &str, path: &str) -> EventRecord {
    let mut content = String::from("# The generation-job state machine\n\n");
    for (i, verb) in VERBS.iter().enumerate() {
        content.push_str(&format!(
            "## {verb}\n\nA job moves on `{verb}` only from the state the transition expects, in one \
             conditional UPDATE that also appends a row to generation_job_events. The guard checks the \
             lock owner where a worker acts; an operator's `{verb}` overrides the lease. Step {i} of the \
             lifecycle; see crates/shared/src/jobs/state_machine.rs.\n\n"
        ));
    }
    tool(
        id,
        "Write",
        json!({ "file_path": format!("{ROOT}/{path}"), "content": content }),
        json!({ "type": "create", "filePath": format!("{ROOT}/{path}"), "content": content, "structuredPatch": [] }),
    )
}

/// A Bash call: `Ok(stdout)` is a PostToolUse, `Err(output)` a PostToolUseFailure.
fn bash(id: &str, command: &str, outcome: Result<String, String>) -> EventRecord {
    let input = json!({ "command": command, "description": format!("Run {command}") });
    match outcome {
        Ok(stdout) => tool(
            id,
            "Bash",
            input,
            json!({ "stdout": stdout, "stderr": "", "interrupted": false, "isImage": false }),
        ),
        Err(output) => hook(
            "PostToolUseFailure",
            json!({ "tool_name": "Bash", "tool_use_id": id, "tool_input": input,
                    "error": format!("Exit code 101\n{output}"), "is_interrupt": false }),
        ),
    }
}

/// `cargo test` output over the workspace's crates, 8 tests per file; when
/// `fail`, the first test fails and cargo stops after that crate.
fn test_output(turn: usize, fail: bool) -> String {
    let crates = [
        ("cairn-shared", "crates/shared"),
        ("cairn-api", "services/api"),
        ("cairn-generator", "services/generator"),
        ("cairn", "crates/cli"),
    ];
    let mut out = String::new();
    for (name, dir) in crates {
        out.push_str(&format!("   Compiling {name} v0.1.0 ({ROOT}/{dir})\n"));
    }
    out.push_str(&format!(
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n",
        20 + turn,
        turn * 7 % 100
    ));
    for (c, (name, dir)) in crates.iter().enumerate() {
        let files: Vec<&str> = FILES
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| p.starts_with(dir))
            .collect();
        let tests: Vec<String> = files
            .iter()
            .flat_map(|path| {
                VERBS.iter().enumerate().map(move |(v, verb)| {
                    format!(
                        "{}::tests::{verb}_{}",
                        stem(path),
                        NOUNS[(v + turn) % NOUNS.len()]
                    )
                })
            })
            .collect();
        out.push_str(&format!(
            "     Running unittests src/lib.rs (target/debug/deps/{}-{:016x})\n\nrunning {} tests\n",
            name.replace('-', "_"),
            0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(c as u64 + 1),
            tests.len()
        ));
        for (i, test) in tests.iter().enumerate() {
            let verdict = if fail && i == 0 { "FAILED" } else { "ok" };
            out.push_str(&format!("test {test} ... {verdict}\n"));
        }
        if fail {
            out.push_str(&format!(
                "\nfailures:\n\n---- {test} stdout ----\n\nthread '{test}' panicked at {file}:{line}:9:\n\
                 assertion `left == right` failed\n  left: Err(\"limit 0 is not a number\")\n right: Ok([])\n\
                 note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\
                 failures:\n    {test}\n\ntest result: FAILED. {passed} passed; 1 failed; 0 ignored; 0 measured; \
                 0 filtered out; finished in 0.{ms:02}s\n\nerror: test failed, to rerun pass `-p {name} --lib`\n",
                test = tests[0],
                file = files[0],
                line = 40 + turn,
                passed = tests.len() - 1,
                ms = turn + 11
            ));
            return out;
        }
        out.push_str(&format!(
            "\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.{:02}s\n\n",
            tests.len(),
            c * 13 + turn
        ));
    }
    out.push_str("   Doc-tests cairn_shared\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed\n");
    out
}

fn build_error(file: usize) -> String {
    let path = FILES[file].0;
    format!(
        "   Compiling cairn-shared v0.1.0 ({ROOT}/crates/shared)\n\
         error[E0433]: failed to resolve: use of undeclared type `Duration`\n  --> {path}:42:23\n   |\n\
         42 |     let timeout = Duration::from_millis(limit as u64);\n   |                   ^^^^^^^^ use of \
         undeclared type `Duration`\n   |\nhelp: consider importing this struct\n   |\n1  + use \
         std::time::Duration;\n   |\n\nFor more information about this error, try `rustc --explain E0433`.\n\
         error: could not compile `cairn-shared` (lib) due to 1 previous error\n"
    )
}

fn clippy() -> String {
    "    Checking cairn-shared v0.1.0\n    Checking cairn-api v0.1.0\n    Checking cairn-generator v0.1.0\n\
     \x20   Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.41s\n"
        .into()
}

fn git_status(turn: usize) -> String {
    (0..3)
        .map(|i| format!(" M {}\n", FILES[(turn * 3 + i * 5) % FILES.len()].0))
        .collect()
}

/// A unified diff of the turn's edits.
fn git_diff(edits: &[(&str, String, String)]) -> String {
    let mut out = String::new();
    for (i, (path, old, new)) in edits.iter().enumerate() {
        out.push_str(&format!(
            "diff --git a/{path} b/{path}\nindex {:07x}..{:07x} 100644\n--- a/{path}\n+++ b/{path}\n\
             @@ -{},{} +{},{} @@\n",
            0x3f2a1b0 + i * 977,
            0x9c8d7e6 + i * 613,
            10 + i * 31,
            old.lines().count(),
            10 + i * 31,
            new.lines().count()
        ));
        for line in diff_lines(old, new) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn diff_lines(old: &str, new: &str) -> Vec<String> {
    let removed = old.lines().map(|l| format!("-{l}"));
    removed.chain(new.lines().map(|l| format!("+{l}"))).collect()
}

/// Rust-looking source of about `bytes` bytes, always the same for `path`.
fn source(path: &str, bytes: usize) -> String {
    let module = stem(path);
    let mut out = format!(
        "//! {module}: part of the Cairn workspace.\n\nuse std::collections::HashMap;\n\n\
         use anyhow::{{Context, Result}};\nuse serde::{{Deserialize, Serialize}};\n\n"
    );
    let mut i = module.len();
    while out.len() < bytes {
        let (verb, noun) = (VERBS[i % VERBS.len()], NOUNS[(i * 7) % NOUNS.len()]);
        if i.is_multiple_of(3) {
            out.push_str(&format!(
                "#[derive(Clone, Debug, Serialize, Deserialize)]\npub struct {}{} {{\n    pub id: u64,\n    \
                 pub name: String,\n    pub limit: usize,\n    pub tags: Vec<String>,\n}}\n\n",
                capitalize(verb),
                capitalize(noun)
            ));
        }
        out.push_str(&format!(
            "/// Checks and collects the {noun} fields of one request for `{verb}`.\n\
             pub fn {verb}_{noun}(input: &HashMap<String, String>, limit: usize) -> Result<Vec<String>> {{\n\
             \x20   let mut out = Vec::with_capacity(limit.min(64));\n\
             \x20   for (key, value) in input.iter().take(limit) {{\n\
             \x20       if value.trim().is_empty() {{\n\
             \x20           continue;\n\
             \x20       }}\n\
             \x20       let parsed = value.parse::<u64>().with_context(|| format!(\"{noun} {{key}} is not a number\"))?;\n\
             \x20       out.push(format!(\"{{key}}={{parsed}}\"));\n\
             \x20   }}\n\
             \x20   Ok(out)\n\
             }}\n\n"
        ));
        i += 1;
    }
    out
}

fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".rs").unwrap_or(file)
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
