//! Generators for tests: in-process (`start`) or as a child process
//! (`spawn_process`), configured like the API they sit beside; and waiting
//! on the database.

use std::{
    collections::HashMap,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use cairn_generator::{config::GeneratorConfig, worker};
use cairn_testkit::{TestApp, cc};
use serde_json::json;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// A generator running inside the test process.
pub struct InProcess {
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl InProcess {
    /// Cancels and waits for the drain.
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

/// The generator's environment: the app's store, fast sweeps, short leases, the heuristic provider.
pub fn env_for(app: &TestApp, extra: &[(&str, &str)]) -> HashMap<String, String> {
    let mut env: HashMap<String, String> = [
        ("CAIRN_DATABASE_URL", app.database_url.as_str()),
        ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
        ("CAIRN_DATABASE_MAX_CONNECTIONS", "10"),
        ("CAIRN_PROVIDER", "heuristic"),
        ("CAIRN_WORKERS", "2"),
        ("CAIRN_SWEEP_MS", "250"),
        ("CAIRN_LEASE_MS", "3000"),
        ("CAIRN_HEARTBEAT_MS", "500"),
        ("CAIRN_RETRY_BASE_MS", "200"),
        ("CAIRN_DRAIN_TIMEOUT_MS", "5000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        env.insert(k.to_string(), v.to_string());
    }
    env
}

pub fn start(app: &TestApp, extra: &[(&str, &str)]) -> InProcess {
    let config = GeneratorConfig::from_env(&env_for(app, extra)).expect("generator config");
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(worker::run(config, shutdown.clone()));
    InProcess { shutdown, task }
}

/// A `cairn-generator` process; killed when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Process {
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit on its own.
    pub async fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "generator did not exit within {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub fn spawn_process(app: &TestApp, extra: &[(&str, &str)]) -> Process {
    let child = Command::new(env!("CARGO_BIN_EXE_cairn-generator"))
        .env_clear()
        .envs(env_for(app, extra))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn cairn-generator");
    Process(child)
}

/// Polls `sql` (a scalar count) until it reaches `want`.
pub async fn wait_count(pool: &PgPool, sql: &str, want: i64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(pool)
            .await
            .unwrap();
        if n == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{sql}` is {n}, wanted {want} within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Posts one Claude Code turn: a prompt, a failing then passing test run,
/// a read and an edit, then Stop. Returns nothing; the jobs are in the database.
pub async fn post_turn(app: &TestApp, session: &str, prompt: &str) {
    let events = [
        cc(session, "UserPromptSubmit", json!({ "prompt": prompt })),
        cc(
            session,
            "PostToolUse",
            json!({
            "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "file_path": "src/parser.rs" },
            "tool_response": { "content": "fn parse() {}" } }),
        ),
        cc(
            session,
            "PostToolUseFailure",
            json!({
            "tool_name": "Bash", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "command": "cargo test" },
            "error": "test parser::empty ... FAILED: index out of bounds" }),
        ),
        cc(
            session,
            "PostToolUse",
            json!({
            "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "file_path": "src/parser.rs", "old_string": "a", "new_string": "b" },
            "tool_response": { "ok": true } }),
        ),
        cc(
            session,
            "PostToolUse",
            json!({
            "tool_name": "Bash", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "command": "cargo test" },
            "tool_response": { "stdout": "test result: ok. 12 passed", "stderr": "" } }),
        ),
        cc(
            session,
            "Stop",
            json!({ "last_assistant_message": "Fixed the empty-input panic in the parser." }),
        ),
    ];
    for body in events {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
}

/// Counts rows of `table` for the app's project.
pub async fn rows(app: &TestApp, table: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) FROM {table} WHERE project_id = '{}'",
        app.project_id
    ))
    .await
}

pub const MINUTE: Duration = Duration::from_secs(60);
pub const SHORT: Duration = Duration::from_secs(20);
