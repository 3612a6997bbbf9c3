//! The probes behind `cairn-api health` and `cairn-generator health`, and
//! the liveness file the generator's main loop touches.

use std::{
    path::Path,
    time::{Duration, SystemTime},
};

/// True when `url` answers 200 within `timeout`.
pub async fn http_ok(url: &str, timeout: Duration) -> bool {
    let Ok(client) = reqwest::Client::builder().timeout(timeout).build() else {
        return false;
    };
    matches!(client.get(url).send().await, Ok(r) if r.status() == reqwest::StatusCode::OK)
}

/// Marks the process alive now.
pub fn touch(path: &Path) -> std::io::Result<()> {
    std::fs::write(path, chrono_free_now().to_string())
}

/// True when `path` was touched within `max_age`.
pub fn fresh(path: &Path, max_age: Duration) -> bool {
    let Ok(modified) = std::fs::metadata(path).and_then(|m| m.modified()) else {
        return false;
    };
    SystemTime::now()
        .duration_since(modified)
        .map(|age| age <= max_age)
        .unwrap_or(true)
}

fn chrono_free_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touched_file_is_fresh_an_old_or_missing_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alive");
        assert!(!fresh(&path, Duration::from_secs(30)), "missing");
        touch(&path).unwrap();
        assert!(fresh(&path, Duration::from_secs(30)));
        let old = SystemTime::now() - Duration::from_secs(120);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(!fresh(&path, Duration::from_secs(30)), "stale");
    }
}
