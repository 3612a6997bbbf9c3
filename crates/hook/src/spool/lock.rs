//! The spool's two locks, on sibling files so that rewriting the spool (by
//! rename) never invalidates them: `.lock` serialises appends and rewrites,
//! `.flush.lock` lets one flusher at a time replay.

use std::{
    fs::{File, OpenOptions, TryLockError},
    os::unix::fs::OpenOptionsExt,
    path::Path,
};

/// Held while appending to, reading or rewriting the spool file.
#[derive(Debug)]
pub struct AppendGuard(#[allow(dead_code)] File);

/// Held by the one process replaying the spool.
#[derive(Debug)]
pub struct FlushGuard(#[allow(dead_code)] File);

fn open(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        super::disk::create_dir(dir)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// Blocks until the append lock is ours. Holders keep it for one short write.
pub fn append(path: &Path) -> std::io::Result<AppendGuard> {
    let file = open(path)?;
    file.lock()?;
    Ok(AppendGuard(file))
}

/// The flush lock if free, `None` when another flusher holds it.
pub fn try_flush(path: &Path) -> std::io::Result<Option<FlushGuard>> {
    let file = open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(FlushGuard(file))),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Waits for the flush lock (an interactive `cairn spool flush`).
pub fn flush(path: &Path) -> std::io::Result<FlushGuard> {
    let file = open(path)?;
    file.lock()?;
    Ok(FlushGuard(file))
}
