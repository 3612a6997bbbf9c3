//! The spool's sidecar (`<stem>.meta`): how many events were dropped because
//! the spool was full. Written under the append lock.

use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub dropped: u64,
}

/// A missing or unreadable sidecar counts as nothing dropped.
pub fn read(path: &Path) -> Meta {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

pub fn add_dropped(path: &Path, n: u64) -> std::io::Result<()> {
    let mut meta = read(path);
    meta.dropped = meta.dropped.saturating_add(n);
    let text = serde_json::to_vec(&meta).map_err(std::io::Error::other)?;
    super::disk::write_atomic(path, &text)
}
