//! Errors of hook calls, appended to `<spool dir>/../hook.log` (bounded) so
//! that `cairn doctor` can show the last one; also one line on stderr.

use std::{
    fs::OpenOptions,
    io::Write,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
};

/// Past this size the log is moved to `hook.log.1` and started again.
const MAX_LOG_BYTES: u64 = 256 * 1024;

pub fn path(spool_dir: &Path) -> PathBuf {
    spool_dir.parent().unwrap_or(spool_dir).join("hook.log")
}

/// Best effort: a log that cannot be written must not fail the hook.
pub fn error(spool_dir: &Path, agent: &str, message: &str) {
    eprintln!("cairn hook {agent}: {message}");
    let path = path(spool_dir);
    let _ = append(&path, agent, message);
}

fn append(path: &Path, agent: &str, message: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        std::fs::rename(path, path.with_extension("log.1"))?;
    }
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let message = message.replace('\n', " ");
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    // One write per line, so concurrent hooks do not interleave within a line.
    file.write_all(format!("{now} {agent} {message}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_beside_the_spool_dir_and_the_log_stays_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let spool_dir = tmp.path().join("state/spool");
        let log = path(&spool_dir);
        assert_eq!(log, tmp.path().join("state/hook.log"));
        error(&spool_dir, "claude-code", "first\nerror");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.ends_with(" claude-code first error\n"), "{text}");
        let long = "x".repeat(1024);
        for _ in 0..400 {
            error(&spool_dir, "codex", &long);
        }
        assert!(std::fs::metadata(&log).unwrap().len() <= MAX_LOG_BYTES + 2048);
        assert!(log.with_extension("log.1").exists());
    }
}
