//! `cairn doctor` as a user runs it: the binary, against a real cairn-api
//! (`cairn_testkit::spawn_app`) or a closed port, from a temporary repository.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use cairn_testkit::spawn_app;

struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        fs::create_dir_all(home.join(".config")).unwrap();
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::write(
            repo.join(".git/config"),
            "[remote \"origin\"]\n\turl = git@github.com:acme/web.git\n",
        )
        .unwrap();
        Sandbox {
            _dir: dir,
            home,
            repo,
        }
    }

    fn cairn(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        cairn(&self.home, &self.repo, args, env)
    }
}

/// `cairn <args>` run from `repo`, with HOME and the XDG directories in `home`.
fn cairn(home: &Path, repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .args(args)
        .current_dir(repo)
        .env_clear()
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{text}"))
}

/// Runs the (blocking) binary off the runtime that serves the API.
async fn doctor(sb: &Sandbox, url: &str, token: &str) -> Output {
    let (home, repo) = (sb.home.clone(), sb.repo.clone());
    let (url, token) = (url.to_string(), token.to_string());
    tokio::task::spawn_blocking(move || {
        cairn(
            &home,
            &repo,
            &["doctor"],
            &[("CAIRN_URL", &url), ("CAIRN_TOKEN", &token)],
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_checks_pass_against_a_real_server() {
    let app = spawn_app().await;
    let sb = Sandbox::new();
    assert!(sb.cairn(&["install", "claude-code"], &[]).status.success());

    let out = doctor(&sb, &app.base, &app.ingest_token).await;
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(line(&text, "✓ server").contains(&app.base), "{text}");
    assert!(line(&text, "✓ token").contains("ingest"), "{text}");
    assert!(
        line(&text, "✓ project").contains(&app.project_id.to_string()),
        "{text}"
    );
    line(&text, "✓ spool");
    assert!(
        line(&text, "✓ hooks claude-code (project)").contains(".claude/settings.json"),
        "{text}"
    );
    assert!(!text.contains(&app.ingest_token), "token printed:\n{text}");
    assert!(!text.contains('✗'), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_fails_with_advice() {
    let app = spawn_app().await;
    let sb = Sandbox::new();
    let out = doctor(&sb, &app.base, "not-a-real-token").await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    line(&text, "✓ server");
    assert!(line(&text, "✗ token").contains("refused"), "{text}");
    assert!(text.contains("mint a new one"), "{text}");
    line(&text, "- project: skipped");
}

#[test]
fn a_closed_port_fails_with_advice_and_exit_1() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let sb = Sandbox::new();
    // An install with one event missing, to see the hooks check fail too.
    assert!(sb.cairn(&["install", "cursor"], &[]).status.success());
    let hooks = sb.repo.join(".cursor/hooks.json");
    let text = fs::read_to_string(&hooks).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["hooks"].as_object_mut().unwrap().remove("stop");
    fs::write(&hooks, serde_json::to_string_pretty(&v).unwrap()).unwrap();

    let url = format!("http://127.0.0.1:{port}");
    let out = sb.cairn(&["doctor"], &[("CAIRN_URL", &url), ("CAIRN_TOKEN", "t")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(line(&text, "✗ server").contains(&url), "{text}");
    assert!(text.contains("→ start the server"), "{text}");
    line(&text, "- token: skipped");
    assert!(
        line(&text, "✗ hooks cursor (project)").contains("8 of 9 events"),
        "{text}"
    );
    assert!(text.contains("→ `cairn install cursor`"), "{text}");
}

#[test]
fn no_config_and_no_hooks_say_what_to_run() {
    let sb = Sandbox::new();
    let out = sb.cairn(&["doctor"], &[("CAIRN_URL", "http://127.0.0.1:9")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(line(&text, "✗ token").contains("none configured"), "{text}");
    assert!(line(&text, "✗ hooks").contains("no agent"), "{text}");
    assert!(text.contains("`cairn install <agent>`"), "{text}");
}
