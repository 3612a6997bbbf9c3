//! The system under test: a private Postgres and Redis, the real `cairn-api`
//! and `cairn-generator` processes against them, and the faults the
//! scenarios inject. Dropping a `Stack` kills every process and removes the
//! temp dir.

use std::{
    collections::HashMap,
    path::PathBuf,
    process::{Command, ExitStatus},
    time::{Duration, Instant},
};

use sqlx::{PgPool, postgres::PgPoolOptions};

use crate::{
    bins::bins,
    postgres::Postgres,
    procs::{Proc, TempDir, free_port, tail, wait_port},
    redis::Redis,
};

pub const DATABASE: &str = "cairn";

pub struct Stack {
    // Fields drop in order: processes before the servers they use, the dir last.
    api: Option<Proc>,
    generator: Option<Proc>,
    /// The rest of a replica set: more API processes and generators on the
    /// same Postgres and Redis (the faults hit the first of each).
    replicas: Vec<Replica>,
    pub redis: Redis,
    pub pg: Postgres,
    pub api_port: u16,
    pub base: String,
    pub ingest_token: String,
    pub api_log: PathBuf,
    pub generator_log: PathBuf,
    redis_log: PathBuf,
    /// Processes that exited without being told to, and were started again
    /// (as a supervisor would): (name, status).
    pub unexpected_exits: Vec<(String, String)>,
    jwt_secret: String,
    /// Removed last, once every process is gone.
    _dir: TempDir,
}

/// One more API process (`port`) or generator (`None`) of a replica set.
struct Replica {
    proc: Option<Proc>,
    port: Option<u16>,
    log: PathBuf,
}

fn random_hex(bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

impl Stack {
    pub async fn start(label: &str) -> Stack {
        // Built (or found) before anything is started; blocking, once per process.
        tokio::task::block_in_place(bins);
        let dir = TempDir::new(label);
        let pg = Postgres::start(dir.path()).await;
        pg.create_database(DATABASE).await;
        let redis = Redis::start(dir.path()).await;
        let api_port = free_port();
        let mut stack = Stack {
            api: None,
            generator: None,
            replicas: vec![],
            api_port,
            base: format!("http://127.0.0.1:{api_port}"),
            ingest_token: String::new(),
            api_log: dir.path().join("api.log"),
            generator_log: dir.path().join("generator.log"),
            redis_log: dir.path().join("redis.log"),
            unexpected_exits: vec![],
            jwt_secret: random_hex(32),
            redis,
            pg,
            _dir: dir,
        };
        stack.start_api().await;
        stack.ingest_token = stack.bootstrap_token().await;
        stack.start_generator();
        stack
    }

    fn database_url(&self, app: &str) -> String {
        format!("{}?application_name={app}", self.pg.url(DATABASE))
    }

    fn api_env(&self, port: u16) -> HashMap<&'static str, String> {
        HashMap::from([
            ("CAIRN_DATABASE_URL", self.database_url("cairn-api")),
            ("CAIRN_REDIS_URL", self.redis.url()),
            ("CAIRN_JWT_SECRET", self.jwt_secret.clone()),
            ("CAIRN_LISTEN_ADDR", format!("127.0.0.1:{port}")),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "10".into()),
            // A turn the load leaves without Stop still becomes runnable within the drain.
            ("CAIRN_TURN_IDLE_MS", "5000".into()),
            ("RUST_LOG", "info,sqlx=warn".into()),
            ("NO_COLOR", "1".into()),
        ])
    }

    fn generator_env(&self) -> HashMap<&'static str, String> {
        HashMap::from([
            ("CAIRN_DATABASE_URL", self.database_url("cairn-generator")),
            ("CAIRN_REDIS_URL", self.redis.url()),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "5".into()),
            ("CAIRN_PROVIDER", "heuristic".into()),
            ("CAIRN_WORKERS", "2".into()),
            ("CAIRN_SWEEP_MS", "250".into()),
            ("CAIRN_LEASE_MS", "3000".into()),
            ("CAIRN_HEARTBEAT_MS", "500".into()),
            ("CAIRN_RETRY_BASE_MS", "200".into()),
            ("CAIRN_RETRY_MAX_MS", "2000".into()),
            ("CAIRN_DRAIN_TIMEOUT_MS", "2000".into()),
            (
                "RUST_LOG",
                "info,sqlx=warn,apalis=warn,apalis_core=warn,apalis_redis=warn".into(),
            ),
            ("NO_COLOR", "1".into()),
        ])
    }

    fn command(program: &PathBuf, env: HashMap<&'static str, String>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear();
        if let Ok(path) = std::env::var("PATH") {
            cmd.env("PATH", path);
        }
        cmd.envs(env);
        cmd
    }

    pub async fn start_api(&mut self) {
        let cmd = Self::command(&bins().api, self.api_env(self.api_port));
        self.api = Some(Proc::spawn("cairn-api", cmd, &self.api_log, Some(libc::SIGTERM)));
        self.wait_api().await;
    }

    /// Makes the stack a replica set: `apis` more API processes and
    /// `generators` more generators beside the first of each.
    pub async fn start_replicas(&mut self, apis: usize, generators: usize) {
        for i in 0..apis + generators {
            let port = (i < apis).then(free_port);
            let log = self.api_log.with_file_name(format!("replica-{i}.log"));
            self.replicas.push(Replica {
                proc: None,
                port,
                log,
            });
            self.start_replica(i).await;
        }
    }

    async fn start_replica(&mut self, i: usize) {
        let (port, log) = (self.replicas[i].port, self.replicas[i].log.clone());
        let (name, cmd) = match port {
            Some(port) => ("cairn-api", Self::command(&bins().api, self.api_env(port))),
            None => (
                "cairn-generator",
                Self::command(&bins().generator, self.generator_env()),
            ),
        };
        self.replicas[i].proc = Some(Proc::spawn(name, cmd, &log, Some(libc::SIGTERM)));
        if let Some(port) = port {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !wait_port(port, Duration::from_millis(100)).await {
                assert!(
                    Instant::now() < deadline,
                    "{name} replica did not listen:\n{}",
                    tail(&log, 40)
                );
            }
        }
    }

    /// Every API process's base URL, the first one's first.
    pub fn bases(&self) -> Vec<String> {
        let more = self.replicas.iter().filter_map(|r| r.port);
        std::iter::once(self.base.clone())
            .chain(more.map(|p| format!("http://127.0.0.1:{p}")))
            .collect()
    }

    async fn wait_api(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.api.as_mut().and_then(|p| p.exited()) {
                panic!(
                    "cairn-api exited at start ({status}):\n{}",
                    tail(&self.api_log, 40)
                );
            }
            if wait_port(self.api_port, Duration::from_millis(100)).await {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "cairn-api did not listen within 60 s:\n{}",
                tail(&self.api_log, 40)
            );
        }
    }

    /// The ingest token from the first start's bootstrap banner.
    async fn bootstrap_token(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(&self.api_log).unwrap_or_default();
            let mut lines = log.lines();
            while let Some(line) = lines.next() {
                if line.trim_start().starts_with("ingest token")
                    && let Some(token) = lines.next()
                {
                    return token.trim().to_string();
                }
            }
            assert!(
                Instant::now() < deadline,
                "no bootstrap banner with an ingest token in the API's output:\n{}",
                tail(&self.api_log, 40)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn start_generator(&mut self) {
        let cmd = Self::command(&bins().generator, self.generator_env());
        self.generator = Some(Proc::spawn(
            "cairn-generator",
            cmd,
            &self.generator_log,
            Some(libc::SIGTERM),
        ));
    }

    /// kill -9 of the API process.
    pub fn kill_api(&mut self) {
        self.supervise_one(true);
        if let Some(mut p) = self.api.take() {
            p.kill9();
        }
    }

    /// kill -9 of the generator process.
    pub fn kill_generator(&mut self) {
        self.supervise_one(false);
        if let Some(mut p) = self.generator.take() {
            p.kill9();
        }
    }

    /// Restarts whichever process exited on its own, recording it.
    pub async fn supervise(&mut self) {
        if self.supervise_one(true) {
            self.start_api().await;
        }
        if self.supervise_one(false) {
            self.start_generator();
        }
        for i in 0..self.replicas.len() {
            let Some(status) = self.replicas[i].proc.as_mut().and_then(|p| p.exited()) else {
                continue;
            };
            let name = self.replicas[i]
                .proc
                .take()
                .map(|p| p.name.clone())
                .unwrap_or_default();
            self.unexpected_exits
                .push((format!("{name} (replica {i})"), describe(status)));
            self.start_replica(i).await;
        }
    }

    /// True when the process exited on its own (it is then forgotten).
    fn supervise_one(&mut self, api: bool) -> bool {
        let slot = if api { &mut self.api } else { &mut self.generator };
        let Some(status) = slot.as_mut().and_then(|p| p.exited()) else {
            return false;
        };
        let name = slot.take().map(|p| p.name.clone()).unwrap_or_default();
        self.unexpected_exits.push((name, describe(status)));
        true
    }

    /// A small pool for the checks (not the system under test).
    pub async fn observer(&self) -> PgPool {
        PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(5))
            .connect(&self.database_url("cairn-fault"))
            .await
            .expect("connect the observer pool")
    }

    /// Every log file, by name, for the report.
    pub fn logs(&self) -> Vec<(String, PathBuf)> {
        let mut logs = vec![
            ("postgres.log".to_string(), self.pg.log.clone()),
            ("redis.log".to_string(), self.redis_log.clone()),
        ];
        logs.extend(self.service_logs());
        logs
    }

    /// The API's and generators' logs, replicas included, by name.
    pub fn service_logs(&self) -> Vec<(String, PathBuf)> {
        let first = [
            ("api.log".to_string(), self.api_log.clone()),
            ("generator.log".to_string(), self.generator_log.clone()),
        ];
        let replicas = self.replicas.iter().map(|r| {
            let name = r
                .log
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, r.log.clone())
        });
        first.into_iter().chain(replicas).collect()
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}
