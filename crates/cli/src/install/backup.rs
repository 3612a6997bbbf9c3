//! What a file was before Cairn first changed it, kept under
//! `~/.config/cairn/installs/` (mode 0600): its bytes (or that it did not
//! exist), the directories install created for it, and which installs
//! (agent, scope, root) rely on it. Uninstall restores from here byte for
//! byte when nothing else changed in the file meanwhile.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::files;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub path: PathBuf,
    /// The file's text before Cairn's first install; `None`: it did not exist.
    pub original: Option<String>,
    /// Directories install created, outermost first.
    pub created_dirs: Vec<PathBuf>,
    /// The installs relying on this file (`agent:scope:root`).
    pub owners: Vec<String>,
}

pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn record_path(&self, file: &Path) -> PathBuf {
        let digest = Sha256::digest(file.to_string_lossy().as_bytes());
        self.dir.join(format!("{}.json", &hex::encode(digest)[..16]))
    }

    pub fn load(&self, file: &Path) -> anyhow::Result<Option<Record>> {
        let path = self.record_path(file);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let record: Record =
                    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                // A digest collision (or a moved file) is not this file's record.
                Ok((record.path == file).then_some(record))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
        }
    }

    pub fn save(&self, record: &Record) -> anyhow::Result<()> {
        files::create_private_dir(&self.dir)?;
        let text = serde_json::to_string_pretty(record)?;
        files::write_atomic(&self.record_path(&record.path), text.as_bytes(), Some(0o600))
    }

    pub fn delete(&self, file: &Path) -> anyhow::Result<()> {
        match std::fs::remove_file(self.record_path(file)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}
