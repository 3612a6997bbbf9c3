//! Support for the hook tests: a client home in a tempdir that runs the built
//! `cairn` binary, the spool file as the contract names it, and a TCP relay
//! in front of the real API that can be switched off and on at one address.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    path::PathBuf,
    process::{Child, Command, Output, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use serde_json::Value;
use sha2::{Digest, Sha256};

pub struct Client {
    dir: tempfile::TempDir,
    pub url: String,
    pub token: String,
    env: Vec<(String, String)>,
}

pub struct Run {
    pub stdout: String,
    pub code: Option<i32>,
    pub elapsed: Duration,
}

impl Client {
    pub fn new(url: &str, token: &str) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            url: url.to_string(),
            token: token.to_string(),
            env: Vec::new(),
        }
    }

    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.dir.path().join("state/cairn/spool")
    }

    /// `<spool dir>/<sha256(url + "\n" + token)[..16]>.jsonl`, as docs/hook-client.md names it.
    pub fn spool_file(&self) -> PathBuf {
        let digest = Sha256::digest(format!("{}\n{}", self.url, self.token).as_bytes());
        self.spool_dir()
            .join(format!("{}.jsonl", &hex::encode(digest)[..16]))
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        let home = self.dir.path();
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("CAIRN_URL", &self.url)
            .env("CAIRN_TOKEN", &self.token)
            .current_dir(home);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn spawn_hook(&self, body: &Value) -> (Child, Instant) {
        self.spawn_agent_hook("claude-code", body)
    }

    pub fn spawn_agent_hook(&self, agent: &str, body: &Value) -> (Child, Instant) {
        let started = Instant::now();
        let mut child = self
            .command(&["hook", agent])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(body.to_string().as_bytes()).unwrap();
        drop(stdin);
        (child, started)
    }

    pub fn hook(&self, body: &Value) -> Run {
        let (child, started) = self.spawn_hook(body);
        finish(child, started)
    }

    pub fn cairn(&self, args: &[&str]) -> Output {
        self.command(args).stdin(Stdio::null()).output().unwrap()
    }

    pub fn spool_text(&self) -> String {
        std::fs::read_to_string(self.spool_file()).unwrap_or_default()
    }

    /// The spooled entries (torn lines skipped).
    pub fn spooled(&self) -> Vec<Value> {
        self.spool_text()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect()
    }

    /// Writes entries straight into the spool, in the documented line format.
    pub fn write_spool(&self, bodies: &[Value], tail: &[u8]) {
        std::fs::create_dir_all(self.spool_dir()).unwrap();
        let mut text = Vec::new();
        for body in bodies {
            let line = serde_json::json!({
                "v": 1, "agent": "claude-code", "key": uuid::Uuid::new_v4().to_string(),
                "at": 1_700_000_000_000i64, "query": "", "body": body,
            });
            text.extend_from_slice(line.to_string().as_bytes());
            text.push(b'\n');
        }
        text.extend_from_slice(tail);
        std::fs::write(self.spool_file(), text).unwrap();
    }
}

pub fn finish(child: Child, started: Instant) -> Run {
    let out = child.wait_with_output().unwrap();
    Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        code: out.status.code(),
        elapsed: started.elapsed(),
    }
}

/// A port where nothing listens.
pub fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Forwards TCP from a fixed local port to the API; `stop` closes the port
/// (the server is "away"), `start` on the same port brings it back.
pub struct Relay {
    pub port: u16,
    target: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    pub fn new(base: &str) -> Self {
        let target = base.trim_start_matches("http://").parse().unwrap();
        Self {
            port: closed_port(),
            target,
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn start(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        let (stop, target) = (Arc::new(AtomicBool::new(false)), self.target);
        self.stop = stop.clone();
        self.thread = Some(std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = conn else { continue };
                let Ok(server) = TcpStream::connect(target) else {
                    continue;
                };
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        }));
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}
