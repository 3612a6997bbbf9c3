//! A private Postgres primary and its streaming standby, for tests of the
//! read replica: initdb on a free port (`wal_level=replica`, replication
//! allowed from 127.0.0.1); later `pg_basebackup -R` into a second
//! directory, the standby started on another port. Both are stopped
//! (`pg_ctl stop -m immediate`) and their directories removed on drop, a
//! failed test included. As root, the servers run as `postgres` (Postgres
//! refuses root).

use std::{
    os::unix::{fs::MetadataExt, process::CommandExt},
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use sqlx::PgPool;

/// The server binaries: `CAIRN_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin` holding all of them, else `None`.
pub fn server_bin_dir() -> Option<PathBuf> {
    const TOOLS: [&str; 4] = ["initdb", "pg_ctl", "pg_basebackup", "postgres"];
    let has_all = |dir: &Path| TOOLS.iter().all(|t| dir.join(t).is_file());
    if let Some(dir) = std::env::var_os("CAIRN_PG_BIN").map(PathBuf::from) {
        return has_all(&dir).then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, bin)| has_all(bin))
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Who runs the servers: `None` when not root, else the `postgres` user's
/// uid and gid (read from /etc/passwd).
fn run_as() -> Option<(u32, u32)> {
    let euid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX);
    if euid != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("running as root and no `postgres` user to run Postgres as");
    let fields: Vec<&str> = line.split(':').collect();
    Some((fields[2].parse().unwrap(), fields[3].parse().unwrap()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// A primary and its standby, each on its own port under one temporary
/// directory.
pub struct Replicated {
    bin: PathBuf,
    root: PathBuf,
    run_as: Option<(u32, u32)>,
    pub primary_port: u16,
    pub standby_port: u16,
    /// Data directories started so far (stopped on drop).
    started: Vec<PathBuf>,
}

impl Replicated {
    /// initdb and start the primary ([`Replicated::start_standby`] adds the
    /// standby). `None` (with the reason printed) when the server binaries
    /// are missing.
    pub async fn start() -> Option<Replicated> {
        let Some(bin) = server_bin_dir() else {
            println!(
                "skipped: no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup, postgres) \
                 in /usr/lib/postgresql/*/bin or CAIRN_PG_BIN"
            );
            return None;
        };
        let root = std::env::temp_dir().join(format!("cairn-standby-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&root).expect("create the clusters' directory");
        let run_as = run_as();
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid)).expect("chown the clusters' directory");
        }
        let mut pair = Replicated {
            bin,
            root,
            run_as,
            primary_port: free_port(),
            standby_port: free_port(),
            started: vec![],
        };
        let primary = pair.root.join("primary");
        pair.run(
            "initdb",
            &[
                "-D",
                path(&primary),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        append(
            &primary.join("postgresql.conf"),
            "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nwal_level = replica\n\
             max_wal_senders = 4\nhot_standby = on\nfsync = off\nsynchronous_commit = off\n\
             full_page_writes = off\nmax_connections = 100\nshared_buffers = 32MB\n",
        );
        append(
            &primary.join("pg_hba.conf"),
            "\nhost replication all 127.0.0.1/32 trust\n",
        );
        pair.pg_start(&primary, pair.primary_port).await;
        Some(pair)
    }

    /// `pg_basebackup -R` of the primary as it is now, started as its
    /// streaming standby on `standby_port`.
    pub async fn start_standby(&mut self) {
        let standby = self.root.join("standby");
        let port = self.primary_port.to_string();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                path(&standby),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        );
        self.pg_start(&standby, self.standby_port).await;
    }

    pub fn primary_url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.primary_port)
    }

    pub fn standby_url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.standby_port)
    }

    /// Waits until the standby has replayed everything the primary has
    /// written so far.
    pub async fn caught_up(&self, primary: &PgPool, standby: &PgPool) {
        let (target,): (String,) = sqlx::query_as("SELECT pg_current_wal_lsn()::text")
            .fetch_one(primary)
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (done,): (bool,) = sqlx::query_as("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn")
                .bind(&target)
                .fetch_one(standby)
                .await
                .unwrap();
            if done {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby did not replay up to {target} within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the standby at once (`pg_ctl stop -m immediate`).
    pub fn stop_standby(&mut self) {
        let standby = self.root.join("standby");
        self.stop(&standby);
        self.started.retain(|d| *d != standby);
    }

    async fn pg_start(&mut self, data: &Path, port: u16) {
        let log = self
            .root
            .join(format!("{}.log", data.file_name().unwrap().to_string_lossy()));
        let options = format!("-p {port}");
        self.run(
            "pg_ctl",
            &[
                "start",
                "-D",
                path(data),
                "-l",
                path(&log),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
            ],
        );
        self.started.push(data.to_path_buf());
        let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        let deadline = Instant::now() + Duration::from_secs(30);
        while PgPool::connect(&url).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "postgres on port {port} did not accept connections:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn command(&self, tool: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(tool));
        cmd.current_dir(&self.root);
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let out = self
            .command(tool)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run {tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} {args:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn stop(&self, data: &Path) {
        let _ = self
            .command("pg_ctl")
            .args(["stop", "-D", path(data), "-m", "immediate", "-w", "-t", "30"])
            .output();
    }
}

impl Drop for Replicated {
    fn drop(&mut self) {
        for data in self.started.iter().rev() {
            self.stop(data);
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

fn append(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .unwrap_or_else(|e| panic!("open {}: {e}", file.display()));
    f.write_all(text.as_bytes()).unwrap();
}
