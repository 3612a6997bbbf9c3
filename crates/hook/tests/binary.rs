//! The `cairn-hook` binary as agents run it, against a real cairn-api
//! (`cairn_testkit::spawn_app`): memory given back at SessionStart; with the
//! server away, the event spooled and exit 0 with `{}`; the server back at
//! the same address, the next call delivers the backlog first, once, in
//! order; `cairn-hook spool flush` and bad arguments.

use std::{
    io::Write,
    net::{SocketAddr, TcpListener, TcpStream},
    process::{Command, Output, Stdio},
    thread,
};

use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::{Value, json};

/// A client home: the binary run with only this environment.
struct Client {
    home: tempfile::TempDir,
    url: String,
    token: String,
}

impl Client {
    fn command(&self, args: &[&str]) -> Command {
        let home = self.home.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn-hook"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("CAIRN_URL", &self.url)
            .env("CAIRN_TOKEN", &self.token)
            .current_dir(home);
        cmd
    }

    /// `cairn-hook claude-code` with `body` on stdin, off the async runtime.
    async fn hook(&self, body: Value) -> Output {
        let mut cmd = self.command(&["claude-code"]);
        tokio::task::spawn_blocking(move || {
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(body.to_string().as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap()
    }

    fn spooled(&self) -> usize {
        let dir = self.home.path().join("state/cairn/spool");
        std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
                    .map(|e| {
                        std::fs::read_to_string(e.path())
                            .unwrap_or_default()
                            .lines()
                            .count()
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
}

/// A free local address nothing listens on (yet).
fn free_address() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// From now on, `at` relays every connection to `to`.
fn relay(at: SocketAddr, to: SocketAddr) {
    let listener = TcpListener::bind(at).unwrap();
    thread::spawn(move || {
        for inbound in listener.incoming().flatten() {
            let Ok(outbound) = TcpStream::connect(to) else {
                continue;
            };
            let (mut a, mut b) = (inbound.try_clone().unwrap(), outbound.try_clone().unwrap());
            thread::spawn(move || std::io::copy(&mut a, &mut b).ok());
            let (mut c, mut d) = (outbound, inbound);
            thread::spawn(move || std::io::copy(&mut c, &mut d).ok());
        }
    });
}

async fn stored(app: &TestApp, event: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) FROM agent_events WHERE event_type = '{event}'"
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gives_memory_back_spools_when_away_and_delivers_once_when_back() {
    let app = spawn_app().await;
    let up = Client {
        home: tempfile::tempdir().unwrap(),
        url: app.base.clone(),
        token: app.ingest_token.clone(),
    };
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &json!({"projectId": app.project_id, "content": "Deploys pull images with the registry-creds secret"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let out = up
        .hook(cc("s-small", "SessionStart", json!({"source": "startup"})))
        .await;
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("registry-creds"), "{answer}");

    // Away: a closed port. Exit 0, the agent's empty answer, the event spooled.
    let address = free_address();
    let away = Client {
        home: tempfile::tempdir().unwrap(),
        url: format!("http://{address}"),
        token: app.ingest_token.clone(),
    };
    for (i, event) in ["PostToolUse", "Stop"].into_iter().enumerate() {
        let body = cc(
            "s-away",
            event,
            json!({"tool_name": "Bash", "tool_use_id": format!("t-{i}"),
                   "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok"},
                   "last_assistant_message": "tests pass"}),
        );
        let out = away.hook(body).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "{}");
    }
    assert_eq!(away.spooled(), 2);
    let flush = away.command(&["spool", "flush"]).output().unwrap();
    assert_eq!(flush.status.code(), Some(1), "a flush with the server away fails");
    assert_eq!(away.spooled(), 2, "and keeps the backlog");

    // Back at the same address: the next call delivers the backlog first.
    let target: SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    relay(address, target);
    let out = away
        .hook(cc("s-away", "SessionEnd", json!({"reason": "exit"})))
        .await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(away.spooled(), 0, "delivered");
    for event in ["PostToolUse", "Stop", "SessionEnd"] {
        assert_eq!(stored(&app, event).await, 1, "{event} stored once");
    }
    let out = away.command(&["spool", "flush", "--quiet"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn refuses_what_it_does_not_know_and_names_its_version() {
    let bin = env!("CARGO_BIN_EXE_cairn-hook");
    let out = Command::new(bin).arg("vim").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: cairn-hook"));
    let out = Command::new(bin).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("cairn-hook "));
}
