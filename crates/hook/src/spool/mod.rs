//! The durable local spool of events the server did not take: one JSONL file
//! per server and token, appended under a lock, bounded, replayed in order.

mod disk;
mod entry;
mod file;
mod flush;
mod lock;
mod meta;
mod replay;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::client_config::ClientConfig;

pub use entry::Entry;
pub use flush::flush;
pub use lock::FlushGuard;
pub use replay::{Outcome, Sent, replay};

/// One spool: `<dir>/<stem>.jsonl` and its siblings (`.lock`, `.flush.lock`, `.meta`).
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
    stem: String,
    max_bytes: u64,
}

impl Spool {
    /// The spool of one server and token: `sha256(url + "\n" + token)[..16]`.
    pub fn new(dir: &Path, url: &str, token: &str, max_bytes: u64) -> Self {
        let digest = Sha256::digest(format!("{url}\n{token}").as_bytes());
        Self {
            dir: dir.to_path_buf(),
            stem: hex::encode(digest)[..16].to_string(),
            max_bytes,
        }
    }

    pub fn for_config(config: &ClientConfig) -> Self {
        let token = config.token.as_deref().unwrap_or_default();
        Self::new(&config.spool_dir, &config.url, token, config.spool_max_bytes)
    }

    pub fn path(&self) -> PathBuf {
        self.sibling("jsonl")
    }

    fn sibling(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("{}.{ext}", self.stem))
    }

    /// Cheap check (one `stat`, no lock) for anything waiting.
    pub fn has_backlog(&self) -> bool {
        std::fs::metadata(self.path()).is_ok_and(|m| m.len() > 0)
    }

    /// Events dropped so far because the spool was full.
    pub fn dropped(&self) -> u64 {
        meta::read(&self.sibling("meta")).dropped
    }
}
