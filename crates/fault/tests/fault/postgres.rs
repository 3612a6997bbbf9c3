//! A private Postgres cluster: initdb into a temp dir, a free port, no fsync,
//! every warning logged (with the database name) to a file the checks read.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use sqlx::{Connection, PgConnection};

use crate::procs::{Proc, RunAs, find_program, free_port, tail};

pub struct Postgres {
    bin: PathBuf,
    root: PathBuf,
    data: PathBuf,
    pub port: u16,
    pub log: PathBuf,
    run_as: Option<RunAs>,
    proc: Option<Proc>,
}

/// Where the server binaries are: `CAIRN_FAULT_PG_BIN`, the newest
/// /usr/lib/postgresql/*/bin, or `PATH`.
fn server_bin_dir() -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    candidates.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    candidates.reverse();
    let initdb = find_program("initdb", "CAIRN_FAULT_PG_BIN", &candidates).unwrap_or_else(|| {
        panic!(
            "the fault suite needs the PostgreSQL server binaries (initdb, postgres, pg_ctl) and found no \
             initdb: install them (Debian: apt-get install postgresql) or set CAIRN_FAULT_PG_BIN to their directory"
        )
    });
    let dir = initdb.parent().unwrap().to_path_buf();
    for tool in ["postgres", "pg_ctl"] {
        assert!(
            dir.join(tool).is_file(),
            "{} has initdb but no {tool}; set CAIRN_FAULT_PG_BIN to a full PostgreSQL bin directory",
            dir.display()
        );
    }
    dir
}

impl Postgres {
    /// initdb under `root` (a fresh directory) and start the server.
    pub async fn start(root: &Path) -> Postgres {
        let bin = server_bin_dir();
        let run_as = RunAs::for_postgres();
        if let Some(u) = run_as {
            u.chown(root);
        }
        let data = root.join("pgdata");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-D"])
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .current_dir(root);
        if let Some(u) = run_as {
            u.apply(&mut initdb);
        }
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pg = Postgres {
            bin,
            root: root.to_path_buf(),
            data,
            port: free_port(),
            log: root.join("postgres.log"),
            run_as,
            proc: None,
        };
        pg.spawn();
        pg.wait_ready(Duration::from_secs(30)).await;
        pg
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D").arg(&self.data).arg("-p").arg(self.port.to_string());
        for setting in [
            "listen_addresses=127.0.0.1".to_string(),
            // TCP only: a socket path under a long TMPDIR can exceed the 107-byte limit.
            "unix_socket_directories=".to_string(),
            "fsync=off".into(),
            "synchronous_commit=off".into(),
            "full_page_writes=off".into(),
            "max_connections=200".into(),
            "shared_buffers=32MB".into(),
            "log_min_messages=warning".into(),
            "log_line_prefix=%m [%p] db=%d app=%a ".into(),
            "log_connections=off".into(),
            "log_disconnections=off".into(),
        ] {
            cmd.arg("-c").arg(setting);
        }
        cmd.current_dir(&self.root);
        if let Some(u) = self.run_as {
            u.apply(&mut cmd);
        }
        self.proc = Some(Proc::spawn("postgres", cmd, &self.log, Some(libc::SIGQUIT)));
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    async fn wait_ready(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(mut c) = PgConnection::connect(&self.url("postgres")).await
                && sqlx::query("SELECT 1").execute(&mut c).await.is_ok()
            {
                let _ = c.close().await;
                return;
            }
            if let Some(status) = self.proc.as_mut().and_then(|p| p.exited()) {
                panic!("postgres exited ({status}):\n{}", tail(&self.log, 30));
            }
            assert!(
                Instant::now() < deadline,
                "postgres did not accept connections within {within:?}:\n{}",
                tail(&self.log, 30)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn create_database(&self, name: &str) {
        let mut c = PgConnection::connect(&self.url("postgres"))
            .await
            .expect("connect to the private cluster");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut c)
            .await
            .expect("create database");
        let _ = c.close().await;
    }

    /// `pg_ctl stop -m fast` (what `pg_ctl restart -m fast` does first), down
    /// for `down`, then the same server on the same port again.
    pub async fn restart_fast(&mut self, down: Duration) {
        let mut cmd = Command::new(self.bin.join("pg_ctl"));
        cmd.arg("stop")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "-t", "30"]);
        if let Some(u) = self.run_as {
            u.apply(&mut cmd);
        }
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap()
            .expect("run pg_ctl");
        assert!(
            out.status.success(),
            "pg_ctl stop -m fast failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(mut p) = self.proc.take() {
            p.wait_exit(Duration::from_secs(10)).await;
        }
        tokio::time::sleep(down).await;
        self.spawn();
        self.wait_ready(Duration::from_secs(30)).await;
    }
}
