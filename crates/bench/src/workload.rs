//! The benchmarks' synthetic Claude Code workload, generated in code and
//! deterministically (no randomness): realistic turns of tool calls (Reads of
//! 2–8 KB Rust files and a TOML config, Grep, Glob, Edits with Claude Code's
//! `originalFile`, a Write, `cargo test`/`build`/`clippy` and `git` output,
//! TodoWrite, `ls`, failures), as hook bodies ready to post.
//!
//! - [`single_session_turn`]: the 10 turns of one session (`prompt_tokens`);
//! - [`replay`]: 10 sessions × 3 turns (~260 tool events) with planted facts
//!   (`economy`): an error in a failing command's output, a config value in a
//!   file read, a decision in a final message, a changed file and why.

use cairn_testkit::cc;
use serde_json::{Value, json};

/// The working directory of every session.
pub const ROOT: &str = "/home/dev/cairn";

/// A fact planted in the replay, and the exact text that must reach a prompt.
#[derive(Clone, Debug)]
pub struct Fact {
    pub session: usize,
    /// `error`, `config`, `decision`, `change`.
    pub kind: &'static str,
    pub text: String,
}

/// One session's hook bodies, in order, `session_id` set.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub events: Vec<Value>,
}

/// The replay workload.
#[derive(Clone, Debug)]
pub struct Replay {
    pub sessions: Vec<Session>,
    pub facts: Vec<Fact>,
}

impl Replay {
    /// How many tool outcomes (PostToolUse, PostToolUseFailure) the replay holds.
    pub fn tool_events(&self) -> usize {
        self.sessions
            .iter()
            .flat_map(|s| &s.events)
            .filter(|e| is_tool_event(e))
            .count()
    }
}

/// Whether a hook body is a tool outcome.
pub fn is_tool_event(body: &Value) -> bool {
    matches!(
        body["hook_event_name"].as_str(),
        Some("PostToolUse" | "PostToolUseFailure")
    )
}

/// Sessions in the replay, and turns per session.
pub const REPLAY_SESSIONS: usize = 10;
pub const REPLAY_TURNS: usize = 3;

/// 10 sessions × 3 turns built from [`TURNS`]: each session's first turn
/// opens with a TodoWrite, a Read of `config/generator.toml` (and, in even
/// sessions, an `ls`); its second repeats the TodoWrite unchanged and runs a
/// failing `cargo test`; its third ends with a decision. Tool strings longer
/// than 7 calls keep their first 5 and last 2.
pub fn replay() -> Replay {
    let mut sessions = Vec::new();
    let mut facts = Vec::new();
    for s in 0..REPLAY_SESSIONS {
        let id = format!("economy-{s:02}");
        let mut events = vec![hook("SessionStart", json!({ "source": "startup" }))];
        let prompts: Vec<&str> = (0..REPLAY_TURNS)
            .map(|k| TURNS[(s * REPLAY_TURNS + k) % TURNS.len()].prompt)
            .collect();
        for k in 0..REPLAY_TURNS {
            let j = s * REPLAY_TURNS + k;
            let base = &TURNS[j % TURNS.len()];
            let mut tools: String = if base.tools.len() > 7 {
                format!("{}{}", &base.tools[..5], &base.tools[base.tools.len() - 2..])
            } else {
                base.tools.to_string()
            };
            let plant = Plant {
                session: s,
                todos: todos(&prompts),
                error: (k == 1).then(|| format!("lease token lt-{s}4{s}9 does not match the row's token")),
                why: (k == 1).then(|| format!("Retried jobs must not reuse the lease token of attempt {s}.")),
            };
            match k {
                0 => tools.insert_str(0, if s % 2 == 0 { "DCL" } else { "DC" }),
                1 => {
                    tools.insert(0, 'D');
                    if !tools.contains('T') {
                        let at = tools.rfind('t').unwrap_or(tools.len());
                        tools.insert(at, 'T');
                    }
                    if !tools.contains('E') {
                        tools.insert(1, 'R');
                        tools.insert(2, 'E');
                    }
                }
                _ => {}
            }
            let mut message = base.message.to_string();
            if k == 2 {
                let decision = format!(
                    "Decided to keep the lease at {} s rather than shorten it, because slow providers would lose their claim.",
                    20 + s
                );
                message.push(' ');
                message.push_str(&decision);
                facts.push(Fact {
                    session: s,
                    kind: "decision",
                    text: format!("keep the lease at {} s", 20 + s),
                });
            }
            let (turn_events, changed) = turn_events(base.prompt, &tools, &message, j, &plant);
            if k == 0 {
                facts.push(Fact {
                    session: s,
                    kind: "config",
                    text: config_fact(s),
                });
            }
            if let Some(error) = &plant.error {
                facts.push(Fact {
                    session: s,
                    kind: "error",
                    text: error.clone(),
                });
            }
            if let (Some(why), Some(path)) = (&plant.why, changed) {
                facts.push(Fact {
                    session: s,
                    kind: "change",
                    text: path.to_string(),
                });
                facts.push(Fact {
                    session: s,
                    kind: "change",
                    text: why.clone(),
                });
            }
            events.extend(turn_events);
        }
        events.push(hook("SessionEnd", json!({ "reason": "exit" })));
        for e in &mut events {
            e["session_id"] = json!(id);
        }
        sessions.push(Session { id, events });
    }
    Replay { sessions, facts }
}

/// What a replay turn plants: the session (config value), its todo list, the
/// error of its failing test run and the reason given in its first edit.
struct Plant {
    session: usize,
    todos: Vec<Value>,
    error: Option<String>,
    why: Option<String>,
}

/// The 10 turns of one session for `prompt_tokens`: turn `index` of [`TURNS`]
/// with its prompt, its tool calls and its Stop, `session_id` set to `session`.
pub fn single_session_turn(index: usize, session: &str) -> Vec<Value> {
    let turn = &TURNS[index];
    let plant = Plant {
        session: 0,
        todos: vec![],
        error: None,
        why: None,
    };
    let (mut events, _) = turn_events(turn.prompt, turn.tools, turn.message, index, &plant);
    for e in &mut events {
        e["session_id"] = json!(session);
    }
    events
}

/// A turn's hook bodies: UserPromptSubmit, one per tool letter, Stop. Also
/// returns the path of the first file edited.
fn turn_events(
    prompt: &str,
    tools: &str,
    message: &str,
    index: usize,
    plant: &Plant,
) -> (Vec<Value>, Option<&'static str>) {
    let mut events = vec![hook("UserPromptSubmit", json!({ "prompt": prompt }))];
    let (mut reads, mut last_file, mut edits) = (0, index % FILES.len(), Vec::new());
    for (n, tool) in tools.chars().enumerate() {
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
                let why = plant.why.as_deref().filter(|_| edits.is_empty());
                let (event, old, new) = edit(&id, last_file, index + edits.len(), why);
                edits.push((FILES[last_file].0, old, new));
                event
            }
            'W' => write(&id, "docs/state-machine.md"),
            'D' => todo_write(&id, &plant.todos),
            'C' => read_config(&id, plant.session),
            'L' => bash(&id, "ls crates/shared/src", Ok(listing())),
            't' => bash(&id, "cargo test --workspace", Ok(test_output(index, false))),
            'T' => {
                let mut output = test_output(index, true);
                if let Some(error) = &plant.error {
                    output = output.replace("assertion `left == right` failed", error);
                }
                bash(&id, "cargo test --workspace", Err(output))
            }
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
        json!({ "last_assistant_message": message, "stop_hook_active": false }),
    ));
    (events, edits.first().map(|(path, _, _)| *path))
}

/// A todo list with one item per prompt, the first in progress.
fn todos(prompts: &[&str]) -> Vec<Value> {
    prompts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let title: String = p.split(['.', '?']).next().unwrap_or(p).chars().take(70).collect();
            json!({ "content": title, "activeForm": format!("Working on: {title}"),
                    "status": if i == 0 { "in_progress" } else { "pending" } })
        })
        .collect()
}

/// Claude Code's TodoWrite: the new list in the input, old and new in the response.
fn todo_write(id: &str, todos: &[Value]) -> Value {
    tool(
        id,
        "TodoWrite",
        json!({ "todos": todos }),
        json!({ "oldTodos": todos, "newTodos": todos }),
    )
}

/// The planted config line of session `s`.
fn config_fact(s: usize) -> String {
    format!("claim_batch_size = {}", 13 + s)
}

/// A Read of `config/generator.toml`: ~3 KB of commented settings, the
/// session's planted value in the middle.
fn read_config(id: &str, s: usize) -> Value {
    let path = format!("{ROOT}/config/generator.toml");
    let mut content =
        String::from("# Generator settings. Every value can be overridden by CAIRN_* variables.\n\n");
    for (i, section) in ["claim", "lease", "retry", "provider", "budget", "sweeper"]
        .iter()
        .enumerate()
    {
        content.push_str(&format!("[{section}]\n"));
        for (v, noun) in NOUNS.iter().enumerate().take(7) {
            content.push_str(&format!(
                "# How the {section} step treats each {noun}; see docs/{section}.md for the trade-offs.\n"
            ));
            if i == 0 && v == 3 {
                content.push_str(&format!("{}\n", config_fact(s)));
            } else {
                content.push_str(&format!("{noun}_{section}_ms = {}\n", 100 + i * 37 + v * 11));
            }
        }
        content.push('\n');
    }
    let lines = content.lines().count();
    tool(
        id,
        "Read",
        json!({ "file_path": path }),
        json!({ "type": "text", "file": { "filePath": path, "content": content,
                "numLines": lines, "startLine": 1, "totalLines": lines } }),
    )
}

/// `ls` of a source directory.
fn listing() -> String {
    [
        "bootstrap.rs",
        "budget.rs",
        "config.rs",
        "db.rs",
        "jobs",
        "lib.rs",
        "privacy",
        "time.rs",
        "tokens.rs",
    ]
    .join("\n")
}

/// One turn: the user's prompt, its tool calls as letters, the agent's last message.
///
/// G Glob · g Grep · R Read (the next file) · E Edit (the last file read) · W Write ·
/// D TodoWrite · L `ls` · t `cargo test` passing · T `cargo test` failing · B `cargo build` failing ·
/// c `cargo clippy` · s `git status` · d `git diff` of the turn's edits.
pub struct Turn {
    pub prompt: &'static str,
    pub tools: &'static str,
    pub message: &'static str,
}

pub const TURNS: [Turn; 10] = [
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
pub const FILES: [(&str, usize); 16] = [
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

/// A Claude Code hook body in `ROOT`, its `session_id` left for the caller to set.
pub fn hook(event_type: &str, extra: Value) -> Value {
    let mut body = cc("", event_type, extra);
    body["cwd"] = json!(ROOT);
    body
}

fn tool(id: &str, name: &str, input: Value, response: Value) -> Value {
    hook(
        "PostToolUse",
        json!({ "tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": response }),
    )
}

pub fn read(id: &str, file: usize) -> Value {
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

fn glob(id: &str, pattern: &str) -> Value {
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
fn grep(id: &str, pattern: &str) -> Value {
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
/// and grown by two lines (three with `why`, a comment giving the reason).
/// Returns the event and the old and new strings.
fn edit(id: &str, file: usize, k: usize, why: Option<&str>) -> (Value, String, String) {
    let (path, bytes) = FILES[file];
    let original = source(path, bytes);
    let lines: Vec<&str> = original.lines().collect();
    let len = 6 + (k * 5) % 12;
    let start = (k * 13) % lines.len().saturating_sub(len).max(1);
    let old = lines[start..(start + len).min(lines.len())].join("\n");
    let mut new_lines: Vec<String> = old.lines().map(|l| l.replace("limit", "max_items")).collect();
    new_lines.insert(1, format!("    tracing::debug!(step = {k}, \"checked {path}\");"));
    new_lines.push("    // Kept in step with the API's validation; see docs/state-machine.md.".into());
    if let Some(why) = why {
        new_lines.push(format!("    // {why}"));
    }
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

fn write(id: &str, path: &str) -> Value {
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
fn bash(id: &str, command: &str, outcome: Result<String, String>) -> Value {
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
