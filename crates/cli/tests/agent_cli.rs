//! End to end with a real agent CLI: Claude Code (installed by
//! `scripts/agents.sh`) runs two `claude -p` sessions against a local
//! stand-in of the Messages API, with Cairn's hooks installed in the project,
//! a real cairn-api and a generator. The first session's events must land in
//! Postgres, and the memory made of them must reach the model's request in
//! the second session (SessionStart context) — and not in the first.

#[path = "agent_cli/stand_in.rs"]
mod stand_in;
#[path = "agent_cli/support.rs"]
mod support;

use std::{
    path::Path,
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
const FINAL_TEXT: &str = "Done: the notes are read.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_sessions_build_memory_that_the_next_session_receives() {
    let Some(claude) = agent_bin("claude", "CAIRN_CLAUDE_BIN") else {
        return;
    };
    let started = Instant::now();
    let app = spawn_app().await;
    let generator = Generator::start(&app);
    let sandbox = Sandbox::new();
    let notes = sandbox.write("notes.txt", "Ledger: balances on Tuesdays.\n");
    let stand_in = StandIn::start(notes.to_str().unwrap(), FINAL_TEXT).await;
    install_hooks(&sandbox, &app);

    let out = run_claude(&claude, &sandbox, &stand_in, FIRST_PROMPT).await;
    assert!(out.contains(FINAL_TEXT), "claude printed: {out}");
    let first = stand_in.take();
    assert_tool_round_trip(&first);

    // (1) The first session's hook events, as Cairn stored them.
    let p = app.project_id;
    for event in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"] {
        let n = app
            .count(&format!(
                "SELECT count(*) FROM agent_events WHERE project_id = '{p}' \
                 AND source_adapter = 'claude-code' AND event_type = '{event}'"
            ))
            .await;
        assert!(n >= 1, "no {event} event stored; {}", stored_events(&app).await);
    }
    let read_tool = app
        .count(&format!(
            "SELECT count(*) FROM agent_events WHERE project_id = '{p}' \
             AND event_type = 'PostToolUse' AND tool_name = 'Read'"
        ))
        .await;
    assert_eq!(read_tool, 1, "{}", stored_events(&app).await);

    generator.drain(&app, 1, Duration::from_secs(30)).await;
    let remembered = app
        .count(&format!(
            "SELECT count(*) FROM summaries WHERE project_id = '{p}' AND request ILIKE '%{MARK}%'"
        ))
        .await;
    assert!(remembered >= 1, "no summary names the first prompt");

    let out = run_claude(&claude, &sandbox, &stand_in, SECOND_PROMPT).await;
    assert!(out.contains(FINAL_TEXT), "claude printed: {out}");
    let second = stand_in.take();
    generator.stop().await;

    // (2) The memory reached the model in the second session; the control:
    // the first session's context (memory still empty) did not carry it.
    let before = contexts(&first);
    assert!(
        before.iter().all(|c| !c.contains(MARK)),
        "the first session cannot know `{MARK}` from memory: {before:?}"
    );
    let after = contexts(&second);
    assert!(
        after.iter().any(|c| c.contains(MARK)),
        "the second session's model requests carry no Cairn context naming `{MARK}`; \
         contexts found: {after:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(90),
        "took {:?}",
        started.elapsed()
    );
}

/// `cairn install claude-code --scope project`, as a user would run it in
/// the project: hooks in `.claude/settings.json` (and the MCP server in
/// `.mcp.json`), the URL and token in the client config under the sandbox's
/// HOME — so the hooks below get no CAIRN_URL or CAIRN_TOKEN from us.
fn install_hooks(sandbox: &Sandbox, app: &TestApp) {
    let out = std::process::Command::new(CAIRN)
        .args(["install", "claude-code", "--url", &app.base])
        .args(["--token", &app.ingest_token, "--scope", "project"])
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .output()
        .expect("run cairn install");
    assert!(
        out.status.success(),
        "cairn install claude-code failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = sandbox.project.join(".claude/settings.json");
    let text = std::fs::read_to_string(&settings).expect("cairn install wrote .claude/settings.json");
    assert!(text.contains("hook claude-code"), "{text}");
}

/// `claude -p <prompt>` in the project, with nothing of the machine's user:
/// its own HOME and TMPDIR, the stand-in as the API, no telemetry or updates.
/// Returns what it printed.
async fn run_claude(bin: &Path, sandbox: &Sandbox, stand_in: &StandIn, prompt: &str) -> String {
    let mut command = tokio::process::Command::new(bin);
    command
        // `--allowedTools Read` lets the scripted tool call run without a
        // prompt; `--dangerously-skip-permissions` is refused as root.
        .args(["-p", prompt, "--allowedTools", "Read"])
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("TMPDIR", &sandbox.tmp)
        .env("ANTHROPIC_BASE_URL", &stand_in.base)
        .env("ANTHROPIC_API_KEY", "test")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // A loaded 2-core machine must not turn a slow answer into a spooled event.
        .env("CAIRN_HOOK_TIMEOUT_MS", "10000")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(45), command.output())
        .await
        .expect("claude -p did not finish within 45 s")
        .expect("run claude");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "claude -p failed ({}): {stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The session went model → Read → model: the stand-in was really the API.
fn assert_tool_round_trip(requests: &[Recorded]) {
    let messages: Vec<&Recorded> = requests
        .iter()
        .filter(|r| r.path.starts_with("/v1/messages?") || r.path == "/v1/messages")
        .collect();
    let paths: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(messages.len() >= 2, "requests: {paths:?}");
    assert!(
        messages
            .iter()
            .any(|r| r.strings().iter().any(|s| s.contains("balances on Tuesdays"))),
        "no request carried the Read tool's result; requests: {paths:?}"
    );
}

/// Every `<cairn-context>…</cairn-context>` block in the session's model requests.
fn contexts(requests: &[Recorded]) -> Vec<String> {
    const OPEN: &str = "<cairn-context>";
    const CLOSE: &str = "</cairn-context>";
    let mut out = Vec::new();
    for r in requests.iter().filter(|r| r.path.starts_with("/v1/messages")) {
        for s in r.strings() {
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

/// What Cairn stored for the project, by event type, for failure messages.
async fn stored_events(app: &TestApp) -> String {
    let mut out = Vec::new();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        let n = app
            .count(&format!(
                "SELECT count(*) FROM agent_events WHERE project_id = '{}' AND event_type = '{event}'",
                app.project_id
            ))
            .await;
        out.push(format!("{event}: {n}"));
    }
    format!("stored events: {}", out.join(", "))
}
