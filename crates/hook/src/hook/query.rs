//! The query string of a hook call: `project` (when configured), and the
//! repository identity of the hook's working directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::git::Repo;
use crate::agent::Agent;

/// The hook's working directory: the body's `cwd`, Cursor's first
/// `workspace_roots`, else the process's own.
pub fn workdir(agent: Agent, body: &Value) -> PathBuf {
    let from_body = match agent {
        Agent::Cursor => body["workspace_roots"][0]
            .as_str()
            .or_else(|| body["cwd"].as_str()),
        _ => body["cwd"].as_str(),
    };
    from_body
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// `changed`: the worktree's changed files (at a session's start), sent as
/// one `changed` value, a path a line.
pub fn build(
    project: Option<&str>,
    repo: Option<&Repo>,
    cwd: &Path,
    file_hash: Option<&str>,
    changed: &[String],
) -> String {
    let mut pairs: Vec<(&str, String)> = Vec::with_capacity(4);
    if let Some(p) = project {
        pairs.push(("project", p.to_string()));
    }
    if let Some(remote) = repo.and_then(|r| r.remote.as_deref()) {
        pairs.push(("gitRemote", remote.to_string()));
    }
    if let Some(repo) = repo {
        pairs.push(("repoRoot", repo.root.to_string_lossy().into_owned()));
        if let Some(head) = &repo.head {
            pairs.push(("head", head.clone()));
        }
        if let Some(branch) = &repo.branch {
            pairs.push(("branch", branch.clone()));
        }
    }
    if !cwd.as_os_str().is_empty() {
        pairs.push(("cwd", cwd.to_string_lossy().into_owned()));
    }
    if let Some(hash) = file_hash {
        pairs.push(("fileHash", hash.to_string()));
    }
    if !changed.is_empty() {
        pairs.push(("changed", changed.join("\n")));
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn encodes_every_part() {
        let repo = Repo {
            root: PathBuf::from("/home/a b/app"),
            remote: Some("git@github.com:acme/app.git".into()),
            worktree: PathBuf::from("/home/a b/app"),
            common_dir: PathBuf::from("/home/a b/app/.git"),
            git_dir: PathBuf::from("/home/a b/app/.git"),
            head: Some("0123456789abcdef0123456789abcdef01234567".into()),
            branch: Some("feat/x".into()),
        };
        let q = build(
            Some("web"),
            Some(&repo),
            Path::new("/home/a b/app/src"),
            None,
            &[],
        );
        assert_eq!(
            q,
            "project=web&gitRemote=git%40github.com%3Aacme%2Fapp.git&repoRoot=%2Fhome%2Fa%20b%2Fapp\
             &head=0123456789abcdef0123456789abcdef01234567&branch=feat%2Fx&cwd=%2Fhome%2Fa%20b%2Fapp%2Fsrc"
        );
        assert_eq!(
            build(None, None, Path::new("/x"), Some("ab12"), &[]),
            "cwd=%2Fx&fileHash=ab12"
        );
        assert_eq!(
            build(
                None,
                None,
                Path::new("/x"),
                None,
                &["a b.rs".into(), "src/c.rs".into()]
            ),
            "cwd=%2Fx&changed=a%20b.rs%0Asrc%2Fc.rs"
        );
        assert_eq!(encode("é&="), "%C3%A9%26%3D");
    }

    #[test]
    fn cursor_uses_its_first_workspace_root() {
        let body = json!({"workspace_roots": ["/w1", "/w2"], "cwd": "/other"});
        assert_eq!(workdir(Agent::Cursor, &body), PathBuf::from("/w1"));
        assert_eq!(workdir(Agent::ClaudeCode, &body), PathBuf::from("/other"));
        assert_eq!(
            workdir(Agent::Codex, &json!({})),
            std::env::current_dir().unwrap()
        );
    }
}
