//! The content hash of the file a tool call read or changed, sent as
//! `fileHash` so the server can tell when a file its memories describe has
//! changed since (edited by hand, pulled, rebased). Only after the tool ran
//! (`PostToolUse`, Gemini's `AfterTool`), only for a regular file of at most
//! `MAX_BYTES`: the hook never reads more than that.

use std::{io::Read, path::Path};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Files larger than this are not hashed.
pub const MAX_BYTES: u64 = 2 * 1024 * 1024;

/// The SHA-256 (lowercase hex) of the file the event's tool was about, if any.
pub fn of_event(body: &Value, cwd: &Path) -> Option<String> {
    let event = body["hook_event_name"].as_str()?;
    if !matches!(event, "PostToolUse" | "AfterTool") {
        return None;
    }
    let input = &body["tool_input"];
    let path = ["file_path", "notebook_path", "absolute_path", "path"]
        .iter()
        .find_map(|k| input[*k].as_str())
        .filter(|p| !p.is_empty())?;
    let path = cwd.join(path);
    hash(&path)
}

/// The SHA-256 of a regular file of at most `MAX_BYTES`, as lowercase hex.
pub fn hash(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.by_ref().take(MAX_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_BYTES {
        return None;
    }
    Some(hex::encode(Sha256::digest(&bytes)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hashes_the_tools_file_after_it_ran_only() {
        let dir = std::env::temp_dir().join(format!("cairn-hash-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.rs"), b"abc").unwrap();
        // SHA-256("abc").
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let post = json!({ "hook_event_name": "PostToolUse", "tool_input": { "file_path": "src/a.rs" } });
        assert_eq!(of_event(&post, &dir).as_deref(), Some(abc));
        let absolute = json!({ "hook_event_name": "PostToolUse",
                               "tool_input": { "file_path": dir.join("src/a.rs").to_str().unwrap() } });
        assert_eq!(of_event(&absolute, Path::new("/elsewhere")).as_deref(), Some(abc));
        let pre = json!({ "hook_event_name": "PreToolUse", "tool_input": { "file_path": "src/a.rs" } });
        assert_eq!(of_event(&pre, &dir), None);
        let missing =
            json!({ "hook_event_name": "PostToolUse", "tool_input": { "file_path": "src/none.rs" } });
        assert_eq!(of_event(&missing, &dir), None);
        let directory = json!({ "hook_event_name": "PostToolUse", "tool_input": { "file_path": "src" } });
        assert_eq!(of_event(&directory, &dir), None);
        let bash = json!({ "hook_event_name": "PostToolUse", "tool_input": { "command": "ls" } });
        assert_eq!(of_event(&bash, &dir), None);
        let big = dir.join("big.bin");
        std::fs::write(&big, vec![0u8; MAX_BYTES as usize + 1]).unwrap();
        assert_eq!(hash(&big), None, "over the limit: not read");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
