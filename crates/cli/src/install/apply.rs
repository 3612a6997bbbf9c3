//! Applies a target to the disk: install writes Cairn's entries and keeps the
//! file's prior bytes; uninstall puts those bytes back when only Cairn changed
//! the file, else takes Cairn's entries out and leaves the rest as it is.

use std::path::{Path, PathBuf};

use super::{
    backup::{Record, Store},
    files,
    target::Target,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Updated,
    Unchanged,
    /// Uninstall: the file is back to its bytes before install.
    Restored,
    /// Uninstall: the file did not exist before install and is gone again.
    Deleted,
    /// Uninstall: Cairn's entries taken out; other changes made since kept.
    Pruned,
    /// Uninstall: left in place, another install still relies on it.
    StillUsed,
}

impl Outcome {
    pub fn verb(self) -> &'static str {
        match self {
            Outcome::Created => "created",
            Outcome::Updated => "updated",
            Outcome::Unchanged => "unchanged",
            Outcome::Restored => "restored",
            Outcome::Deleted => "deleted",
            Outcome::Pruned => "cleaned",
            Outcome::StillUsed => "kept (still used by another install)",
        }
    }
}

/// Follows a symlinked settings file (dotfile managers) so the link survives.
fn real_path(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

pub fn install(target: &Target, store: &Store, owner: &str) -> anyhow::Result<Outcome> {
    let path = real_path(&target.path);
    let current = files::read_optional(&path)?;
    let wanted = target
        .installed(current.as_deref())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut record = store.load(&target.path)?;
    if current.as_deref() == Some(wanted.as_str()) {
        if let Some(r) = record.as_mut().filter(|r| !r.owners.iter().any(|o| o == owner)) {
            r.owners.push(owner.to_string());
            store.save(r)?;
        }
        return Ok(Outcome::Unchanged);
    }
    let mut record = record.take().unwrap_or_else(|| Record {
        path: target.path.clone(),
        original: current.clone(),
        created_dirs: Vec::new(),
        owners: Vec::new(),
    });
    if let Some(dir) = path.parent() {
        record.created_dirs.extend(files::create_dirs(dir)?);
    }
    if !record.owners.iter().any(|o| o == owner) {
        record.owners.push(owner.to_string());
    }
    // The record first: a crash between the two leaves a way back.
    store.save(&record)?;
    files::write_atomic(&path, wanted.as_bytes(), None)?;
    Ok(if current.is_some() {
        Outcome::Updated
    } else {
        Outcome::Created
    })
}

pub fn uninstall(target: &Target, store: &Store, owner: &str) -> anyhow::Result<Outcome> {
    let path = real_path(&target.path);
    let record = store.load(&target.path)?;
    if let Some(mut r) = record.clone() {
        let before = r.owners.len();
        r.owners.retain(|o| o != owner);
        if !r.owners.is_empty() {
            if r.owners.len() != before {
                store.save(&r)?;
            }
            return Ok(Outcome::StillUsed);
        }
    }
    let Some(current) = files::read_optional(&path)? else {
        if let Some(r) = &record {
            files::remove_empty_dirs(&r.created_dirs);
            store.delete(&target.path)?;
        }
        return Ok(Outcome::Unchanged);
    };
    let pruned = target
        .uninstalled(&current)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let outcome = match &record {
        Some(r) if target.only_cairn_changed(r.original.as_deref(), &current)? => match &r.original {
            Some(original) => {
                if *original != current {
                    files::write_atomic(&path, original.as_bytes(), None)?;
                }
                Outcome::Restored
            }
            None => {
                std::fs::remove_file(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                files::remove_empty_dirs(&r.created_dirs);
                Outcome::Deleted
            }
        },
        _ if pruned != current => {
            files::write_atomic(&path, pruned.as_bytes(), None)?;
            Outcome::Pruned
        }
        _ => Outcome::Unchanged,
    };
    if record.is_some() {
        store.delete(&target.path)?;
    }
    Ok(outcome)
}
