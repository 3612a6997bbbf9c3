//! Child processes the suite owns: each in its own process group, output
//! appended to a log file, killed (with the whole group) when dropped, on a
//! panic too, and by the kernel if the test process itself dies.

use std::{
    fs::OpenOptions,
    io::Write,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

/// A running child: a group leader whose group is killed on drop.
pub struct Proc {
    pub name: String,
    child: Child,
    /// Sent to the leader first on drop (Postgres: SIGQUIT, an immediate
    /// shutdown that takes its backends down too); SIGKILL to the group after.
    polite: Option<i32>,
    reaped: Option<ExitStatus>,
}

/// An unprivileged user to run Postgres as when the suite runs as root
/// (Postgres refuses to start as root).
#[derive(Clone, Copy, Debug)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

impl RunAs {
    /// `None` when not root; otherwise `postgres`, else `nobody`.
    pub fn for_postgres() -> Option<RunAs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        for name in ["postgres", "nobody"] {
            let cname = std::ffi::CString::new(name).unwrap();
            // SAFETY: a valid C string; the result is read at once, before any other getpw* call.
            let pw = unsafe { libc::getpwnam(cname.as_ptr()) };
            if !pw.is_null() {
                // SAFETY: non-null pointer to a passwd record.
                let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
                return Some(RunAs { uid, gid });
            }
        }
        panic!(
            "running as root, and neither a `postgres` nor a `nobody` user exists to run Postgres as \
             (Postgres refuses to run as root)"
        );
    }

    pub fn chown(&self, path: &Path) {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .unwrap_or_else(|e| panic!("chown {} to uid {}: {e}", path.display(), self.uid));
    }

    pub fn apply(&self, cmd: &mut Command) {
        cmd.uid(self.uid).gid(self.gid);
    }
}

/// Opens `log` for appending and writes a header line for this start.
fn log_handles(log: &Path, header: &str) -> (Stdio, Stdio) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("open log {}: {e}", log.display()));
    let _ = writeln!(file, "===== {header} =====");
    let err = file.try_clone().expect("clone log handle");
    (Stdio::from(file), Stdio::from(err))
}

impl Proc {
    /// Spawns `cmd` as a new process group with stdout and stderr appended to `log`.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path, polite: Option<i32>) -> Proc {
        let (out, err) = log_handles(log, &format!("{name} started"));
        cmd.stdin(Stdio::null()).stdout(out).stderr(err).process_group(0);
        // Postgres shuts down cleanly and at once on SIGQUIT; anything else
        // (a generator draining against a dead store) could linger on SIGTERM.
        let death_signal = match polite {
            Some(libc::SIGQUIT) => libc::SIGQUIT,
            _ => libc::SIGKILL,
        };
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // The child dies with the thread that spawned it (a tokio worker of
                // the test's runtime), so a test process killed outright leaks nothing.
                libc::prctl(libc::PR_SET_PDEATHSIG, death_signal as libc::c_ulong);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({:?}): {e}", cmd.get_program()));
        Proc {
            name: name.to_string(),
            child,
            polite,
            reaped: None,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The exit status, once the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait().ok().flatten();
        }
        self.reaped
    }

    /// Sends `signal` to the leader only.
    pub fn signal(&self, signal: i32) {
        // SAFETY: plain kill(2) on our own child.
        unsafe {
            libc::kill(self.pid(), signal);
        }
    }

    /// SIGKILL to the whole group, then reaps the leader.
    pub fn kill9(&mut self) {
        if self.exited().is_none() {
            // SAFETY: kill(2) on our child's process group (it is the leader: process_group(0)).
            unsafe {
                libc::kill(-self.pid(), libc::SIGKILL);
            }
        }
        if self.reaped.is_none() {
            self.reaped = self.child.wait().ok();
        }
    }

    /// Waits for the process to exit on its own, up to `within`.
    pub async fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn blocking_wait_exit(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while self.exited().is_none() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        if let Some(sig) = self.polite {
            self.signal(sig);
            if self.blocking_wait_exit(Duration::from_secs(5)) {
                return;
            }
        }
        self.kill9();
    }
}

/// A directory under the system temp dir, removed on drop (kept when
/// `CAIRN_FAULT_KEEP=1`, and its path printed).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let path = std::env::temp_dir().join(format!("cairn-fault-{label}-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var("CAIRN_FAULT_KEEP").is_ok_and(|v| v == "1") {
            eprintln!("fault: kept {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Waits until something accepts connections on `port`.
pub async fn wait_port(port: u16, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The last `n` lines of a log file, for failure messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Finds an executable: `$dir_env/name` when that variable is set, else the
/// first match in `candidates` (directories), else on `PATH`.
pub fn find_program(name: &str, dir_env: &str, candidates: &[PathBuf]) -> Option<PathBuf> {
    if let Ok(dir) = std::env::var(dir_env) {
        let p = Path::new(&dir).join(name);
        return p.is_file().then_some(p);
    }
    for dir in candidates {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
