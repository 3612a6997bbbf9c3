//! File-system steps for install: read a file that may be absent, write one
//! atomically keeping its mode, create and later prune directories.

use std::{
    io::Write,
    os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

pub fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// Writes through a temporary sibling and a rename, so an agent never reads a
/// half-written file. Keeps an existing file's mode (`~/.claude.json` is
/// private); a new file gets `new_mode`, or 0644.
pub fn write_atomic(path: &Path, bytes: &[u8], new_mode: Option<u32>) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(_) => new_mode.unwrap_or(0o644),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.cairn-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        // The umask may have narrowed `mode`; set it exactly.
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Creates `dir` and its missing parents; returns those it created,
/// outermost first.
pub fn create_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    Ok(missing.into_iter().rev().collect())
}

pub fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))
}

/// Removes the directories install created, innermost first, while empty.
pub fn remove_empty_dirs(created_outermost_first: &[PathBuf]) {
    for dir in created_outermost_first.iter().rev() {
        // Fails (and stops nothing) when something else now lives there.
        let _ = std::fs::remove_dir(dir);
    }
}
