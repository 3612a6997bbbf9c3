//! A private redis-server: a free port, no persistence, stopped and started
//! on the same port, FLUSHALL over a plain socket.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::procs::{Proc, find_program, free_port, tail, wait_port};

pub struct Redis {
    bin: PathBuf,
    pub port: u16,
    log: PathBuf,
    proc: Option<Proc>,
}

impl Redis {
    pub async fn start(root: &Path) -> Redis {
        let bin = find_program("redis-server", "CAIRN_FAULT_REDIS_BIN", &[]).unwrap_or_else(|| {
            panic!(
                "the fault suite needs redis-server and found none on PATH: install it \
                 (Debian: apt-get install redis-server) or set CAIRN_FAULT_REDIS_BIN to its directory"
            )
        });
        let mut redis = Redis {
            bin,
            port: free_port(),
            log: root.join("redis.log"),
            proc: None,
        };
        redis.up().await;
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub async fn up(&mut self) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"]);
        self.proc = Some(Proc::spawn("redis-server", cmd, &self.log, None));
        assert!(
            wait_port(self.port, Duration::from_secs(10)).await,
            "redis-server did not listen on {}:\n{}",
            self.port,
            tail(&self.log, 20)
        );
    }

    /// Kills the server outright (its data goes with it: no persistence).
    pub fn down(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.kill9();
        }
    }

    pub async fn flushall(&self) {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect to redis");
        s.write_all(b"*1\r\n$8\r\nFLUSHALL\r\n").await.unwrap();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"+OK"), "FLUSHALL answered {:?}", &buf[..n]);
    }
}
