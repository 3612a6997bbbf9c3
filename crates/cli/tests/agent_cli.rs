//! End to end with real agent CLIs — Claude Code, Codex and Gemini CLI, as
//! `scripts/agents.sh` installs them — each running two non-interactive
//! sessions against a local stand-in of its model API, with Cairn's hooks
//! installed by `cairn install`, a real cairn-api and a generator. The first
//! session's events must land in Postgres, and the memory made of them must
//! reach the model's request in the second session (SessionStart context) —
//! and not in the first.

#[path = "agent_cli/stand_in.rs"]
mod stand_in;
#[path = "agent_cli/support.rs"]
mod support;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use cairn_testkit::{TestApp, spawn_app};

use stand_in::{Recorded, StandIn};
use support::{Generator, Sandbox, agent_bin};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
/// Only in the first prompt: it can reach the second session only through memory.
const MARK: &str = "quokka";
const FIRST_PROMPT: &str = "Summarise the quokka ledger in notes.txt";
const SECOND_PROMPT: &str = "Read notes.txt again and tell me what to do next";
/// In notes.txt: seen in a request only if the agent really ran the tool.
const NOTES: &str = "Ledger: balances on Tuesdays.";
const FINAL_TEXT: &str = "Done: the notes are read.";

/// One agent CLI: how to install Cairn into it and how to run a session.
struct Agent {
    /// Cairn's slug for the agent: `cairn install <slug>`, `source_adapter`.
    slug: &'static str,
    /// The hook events the first session must store (`event_type`, in
    /// Cairn's names: an adapter may store its agent's events under them).
    events: &'static [&'static str],
    /// `cairn install` scope: `project` where the agent reads project hooks
    /// without a trust prompt, else `user` (inside the sandbox's HOME).
    scope: &'static str,
    /// The agent's own settings: its model API pointed at the stand-in.
    configure: fn(&Sandbox, &StandIn),
    /// The non-interactive session's arguments and environment.
    session: fn(&mut tokio::process::Command, &Sandbox, &StandIn, &str),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_sessions_build_memory_that_the_next_session_receives() {
    let Some(bin) = agent_bin("claude", "CAIRN_CLAUDE_BIN") else {
        return;
    };
    scenario(
        &bin,
        Agent {
            slug: "claude-code",
            events: &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
            scope: "project",
            configure: |_, _| {},
            session: |command, _, stand_in, prompt| {
                command
                    // `--allowedTools Read` lets the scripted tool call run
                    // without asking; `--dangerously-skip-permissions` is
                    // refused as root.
                    .args(["-p", prompt, "--allowedTools", "Read"])
                    .env("ANTHROPIC_BASE_URL", &stand_in.base)
                    .env("ANTHROPIC_API_KEY", "test")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
            },
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_sessions_build_memory_that_the_next_session_receives() {
    let Some(bin) = agent_bin("codex", "CAIRN_CODEX_BIN") else {
        return;
    };
    scenario(
        &bin,
        Agent {
            slug: "codex",
            events: &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
            // Codex reads a project's `.codex/` only once the project is
            // trusted; $CODEX_HOME (in the sandbox) needs no trust.
            scope: "user",
            configure: |sandbox, stand_in| {
                // A custom model provider on the Responses API: the stand-in.
                let config = format!(
                    "model = \"gpt-5\"\nmodel_provider = \"stand-in\"\n\n\
                     [model_providers.stand-in]\nname = \"stand-in\"\n\
                     base_url = \"{}/v1\"\nwire_api = \"responses\"\n\
                     env_key = \"OPENAI_API_KEY\"\n",
                    stand_in.base
                );
                std::fs::create_dir_all(codex_home(sandbox)).unwrap();
                std::fs::write(codex_home(sandbox).join("config.toml"), config).unwrap();
            },
            session: |command, sandbox, _, prompt| {
                command
                    .args(["exec", "--skip-git-repo-check"])
                    // No sandbox (the test's tempdir is the sandbox; Landlock
                    // may be missing), and hooks run without a review prompt.
                    .args(["--dangerously-bypass-approvals-and-sandbox"])
                    .args(["--dangerously-bypass-hook-trust", prompt])
                    .env("CODEX_HOME", codex_home(sandbox))
                    .env("OPENAI_API_KEY", "test");
            },
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_sessions_build_memory_that_the_next_session_receives() {
    let Some(bin) = agent_bin("gemini", "CAIRN_GEMINI_BIN") else {
        return;
    };
    scenario(
        &bin,
        Agent {
            slug: "gemini",
            // Stored under Cairn's names: BeforeAgent, AfterTool, AfterAgent.
            events: &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
            scope: "project",
            configure: |sandbox, _| {
                // An API key (no Google login), every folder trusted (an
                // untrusted one ignores project settings, hooks included),
                // no usage statistics, no update checks.
                let settings = serde_json::json!({
                    "security": { "auth": { "selectedType": "gemini-api-key" },
                                  "folderTrust": { "enabled": false } },
                    "privacy": { "usageStatisticsEnabled": false },
                    "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
                });
                let dir = sandbox.home.join(".gemini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
            },
            session: |command, _, stand_in, prompt| {
                command
                    // `--yolo` approves the tool call without asking.
                    .args(["-p", prompt, "--yolo"])
                    .env("GOOGLE_GEMINI_BASE_URL", &stand_in.base)
                    .env("GEMINI_API_KEY", "test");
            },
        },
    )
    .await;
}

fn codex_home(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join(".codex")
}

/// Two sessions of one agent; see the file's doc.
async fn scenario(bin: &Path, agent: Agent) {
    let started = Instant::now();
    let app = spawn_app().await;
    let generator = Generator::start(&app);
    let sandbox = Sandbox::new();
    let notes = sandbox.write("notes.txt", &format!("{NOTES}\n"));
    let stand_in = StandIn::start(notes.to_str().unwrap(), FINAL_TEXT).await;
    (agent.configure)(&sandbox, &stand_in);
    install(&agent, &sandbox, &app);

    let out = run(bin, &agent, &sandbox, &stand_in, FIRST_PROMPT).await;
    assert!(out.contains(FINAL_TEXT), "{} printed: {out}", agent.slug);
    let first = stand_in.take();
    assert_tool_round_trip(&agent, &first);

    // (1) The first session's hook events, as Cairn stored them.
    let p = app.project_id;
    for event in agent.events {
        let n = app
            .count(&format!(
                "SELECT count(*) FROM agent_events WHERE project_id = '{p}' \
                 AND source_adapter = '{}' AND event_type = '{event}'",
                agent.slug
            ))
            .await;
        assert!(
            n >= 1,
            "{}: no {event} event stored; {}",
            agent.slug,
            stored_events(&app).await
        );
    }

    generator.drain(&app, 1, Duration::from_secs(30)).await;
    // Memory given back is stripped on ingest: it must never come back as
    // memory (Gemini CLI, for one, prepends it to the prompt it reports).
    let requests: Vec<String> = sqlx::query_scalar("SELECT request FROM summaries WHERE project_id = $1")
        .bind(p)
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert!(
        requests
            .iter()
            .all(|r| !r.contains("cairn-context") && !r.contains("hook_context")),
        "{}: the injected context was stored as the user's request: {requests:?}",
        agent.slug
    );
    let remembered = app
        .count(&format!(
            "SELECT count(*) FROM summaries WHERE project_id = '{p}' AND request ILIKE '%{MARK}%'"
        ))
        .await;
    assert!(
        remembered >= 1,
        "{}: no summary names the first prompt",
        agent.slug
    );

    let out = run(bin, &agent, &sandbox, &stand_in, SECOND_PROMPT).await;
    assert!(out.contains(FINAL_TEXT), "{} printed: {out}", agent.slug);
    let second = stand_in.take();
    generator.stop().await;

    // (2) The memory reached the model in the second session; the control:
    // the first session's context (memory still empty) did not carry it.
    let before = contexts(&first);
    assert!(
        !before.is_empty(),
        "{}: the first session got no Cairn context at all (an empty memory still \
         answers one); requests: {:?}",
        agent.slug,
        paths(&first)
    );
    assert!(
        before.iter().all(|c| !c.contains(MARK)),
        "{}: the first session cannot know `{MARK}` from memory: {before:?}",
        agent.slug
    );
    let after = contexts(&second);
    assert!(
        after.iter().any(|c| c.contains(MARK)),
        "{}: the second session's model requests carry no Cairn context naming `{MARK}`; \
         contexts found: {after:?}; requests: {:?}",
        agent.slug,
        paths(&second)
    );
    eprintln!(
        "{}: passed in {:?}; the stand-in saw {:?} then {:?}",
        agent.slug,
        started.elapsed(),
        paths(&first),
        paths(&second)
    );
}

/// `cairn install <agent> --url … --token …`, as a user would run it in the
/// project: hooks in the agent's files, the URL and token in the client
/// config under the sandbox's HOME — so the hooks get no CAIRN_URL or
/// CAIRN_TOKEN from the test.
fn install(agent: &Agent, sandbox: &Sandbox, app: &TestApp) {
    let out = std::process::Command::new(CAIRN)
        .args(["install", agent.slug, "--url", &app.base])
        .args(["--token", &app.ingest_token, "--scope", agent.scope])
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("CODEX_HOME", codex_home(sandbox))
        .output()
        .expect("run cairn install");
    assert!(
        out.status.success(),
        "cairn install {} failed: {}{}",
        agent.slug,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One non-interactive session in the project, with nothing of the
/// machine's user: its own HOME and TMPDIR. Returns what the agent printed.
async fn run(bin: &Path, agent: &Agent, sandbox: &Sandbox, stand_in: &StandIn, prompt: &str) -> String {
    let mut command = tokio::process::Command::new(bin);
    command
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("TMPDIR", &sandbox.tmp)
        // A loaded 2-core machine must not turn a slow answer into a spooled event.
        .env("CAIRN_HOOK_TIMEOUT_MS", "10000")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    (agent.session)(&mut command, sandbox, stand_in, prompt);
    let out = tokio::time::timeout(Duration::from_secs(45), command.output())
        .await
        .unwrap_or_else(|_| panic!("{} did not finish within 45 s", agent.slug))
        .expect("run the agent");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}): {stdout}\n{}",
        agent.slug,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn paths(requests: &[Recorded]) -> Vec<String> {
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// The session went model → tool → model: the stand-in was really the
/// agent's API, and the tool's output came back in a request.
fn assert_tool_round_trip(agent: &Agent, requests: &[Recorded]) {
    assert!(
        requests
            .iter()
            .any(|r| r.strings().iter().any(|s| s.contains(NOTES))),
        "{}: no request carried the tool's result; requests: {:?}",
        agent.slug,
        paths(requests)
    );
}

/// Every `<cairn-context>…</cairn-context>` block in the session's requests.
fn contexts(requests: &[Recorded]) -> Vec<String> {
    const OPEN: &str = "<cairn-context>";
    const CLOSE: &str = "</cairn-context>";
    let mut out = Vec::new();
    for r in requests {
        for s in r.strings() {
            // Gemini CLI HTML-escapes hook context inside its `<hook_context>`.
            let s = s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            let mut rest = s.as_str();
            while let Some(start) = rest.find(OPEN) {
                let tail = &rest[start..];
                let end = tail.find(CLOSE).map_or(tail.len(), |e| e + CLOSE.len());
                out.push(tail[..end].to_string());
                rest = &tail[end..];
            }
        }
    }
    out
}

/// What Cairn stored for the project, by adapter and event type, for failure messages.
async fn stored_events(app: &TestApp) -> String {
    let n = app
        .count(&format!(
            "SELECT count(*) FROM agent_events WHERE project_id = '{}'",
            app.project_id
        ))
        .await;
    let kinds: String = sqlx::query_scalar(
        "SELECT coalesce(string_agg(DISTINCT source_adapter || '/' || event_type, ', '), '') \
         FROM agent_events WHERE project_id = $1",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    format!("{n} events stored: {kinds}")
}
