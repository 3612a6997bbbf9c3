//! What the agent tests share: finding the agent CLIs that
//! `scripts/agents.sh` installs, a generator running in-process, and waiting
//! on the database.

use std::{
    collections::HashMap,
    io::Write,
    path::PathBuf,
    time::{Duration, Instant},
};

use cairn_generator::{config::GeneratorConfig, worker};
use cairn_testkit::TestApp;
use tokio_util::sync::CancellationToken;

/// Where `scripts/agents.sh` installs the agent CLIs (keep in sync with it).
pub fn agents_dir() -> PathBuf {
    match std::env::var_os("CAIRN_AGENTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME"))
            .join(".cache")
            .join("cairn-agents"),
    }
}

/// The agent CLI `name` from `override_var` or the agents dir; `None` means
/// skip (`CAIRN_SKIP_AGENT_CLIS=1`). Missing otherwise is a failure: a
/// silently skipped end-to-end test would pass while proving nothing.
pub fn agent_bin(name: &str, override_var: &str) -> Option<PathBuf> {
    let path = std::env::var_os(override_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| agents_dir().join("node_modules").join(".bin").join(name));
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("CAIRN_SKIP_AGENT_CLIS").as_deref() == Ok("1") {
        // Straight to the process's stderr: the test harness captures
        // `eprintln!` of passing tests, and this notice must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "\n!!!!!!!!\n!!! SKIPPED: the `{name}` end-to-end test (CAIRN_SKIP_AGENT_CLIS=1; \
             no binary at {}).\n!!! Nothing about the real agent was tested.\n!!!!!!!!\n",
            path.display()
        );
        return None;
    }
    panic!(
        "no `{name}` binary at {} — run scripts/agents.sh to install the agent CLIs \
         (or set {override_var}, or CAIRN_SKIP_AGENT_CLIS=1 to skip)",
        path.display()
    );
}

/// A generator running inside the test process with the offline heuristic
/// provider, as the generator's own tests run it.
pub struct Generator {
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Generator {
    pub fn start(app: &TestApp) -> Generator {
        let env: HashMap<String, String> = [
            ("CAIRN_DATABASE_URL", app.database_url.as_str()),
            ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "5"),
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
        let config = GeneratorConfig::from_env(&env).expect("generator config");
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(worker::run(config, shutdown.clone()));
        Generator { shutdown, task }
    }

    /// Waits until the project has jobs and none is still queued or
    /// processing, and `summaries` summaries exist: what the first session
    /// left is then all in memory.
    pub async fn drain(&self, app: &TestApp, summaries: i64, within: Duration) {
        let p = app.project_id;
        let deadline = Instant::now() + within;
        loop {
            let total = app
                .count(&format!(
                    "SELECT count(*) FROM generation_jobs WHERE project_id = '{p}'"
                ))
                .await;
            let open = app
                .count(&format!(
                    "SELECT count(*) FROM generation_jobs WHERE project_id = '{p}' \
                     AND status IN ('queued', 'processing')"
                ))
                .await;
            let written = app
                .count(&format!(
                    "SELECT count(*) FROM summaries WHERE project_id = '{p}'"
                ))
                .await;
            if total > 0 && open == 0 && written >= summaries {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "generator not drained within {within:?}: {total} jobs, {open} open, \
                 {written} summaries (wanted {summaries})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

/// A directory with the agent's home (so nothing of the machine's user is
/// read or written) and the project the agent works in.
pub struct Sandbox {
    pub _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    pub tmp: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        let tmp = dir.path().join("tmp");
        for d in [&home, &project, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        Sandbox {
            _dir: dir,
            home,
            project,
            tmp,
        }
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.project.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}
