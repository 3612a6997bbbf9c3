//! Runs the `cairn` binary off the runtime that serves the API, in a scratch
//! HOME (no client config file) with CAIRN_URL and CAIRN_TOKEN set.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use cairn_testkit::TestApp;

pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Self {
        Run {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// `cairn <args>` with `token`, feeding `stdin`.
pub async fn cairn(app: &TestApp, token: &str, args: &[&str], stdin: &[u8]) -> Run {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (url, token, stdin) = (app.base.clone(), token.to_string(), stdin.to_vec());
    tokio::task::spawn_blocking(move || {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(&args)
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CAIRN_URL", url)
            .env("CAIRN_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&stdin).unwrap();
        Run::from(child.wait_with_output().unwrap())
    })
    .await
    .unwrap()
}

/// Same, as the bootstrap admin (a superadmin of the default team).
pub async fn admin(app: &TestApp, args: &[&str]) -> Run {
    cairn(app, &app.admin_token, args, b"").await
}
