//! The event of one call, made ready to send: stdin parsed, the transcript's
//! last assistant text added where Claude Code left it out, the privacy
//! filter applied, and the key, time and query fixed once for good.

use std::{io::Read, path::PathBuf, thread::JoinHandle};

use anyhow::Context;
use cairn_privacy::PrivacyFilter;
use serde_json::{Value, value::RawValue};

use super::{changed, file_hash, git, query, transcript};
use crate::{agent::Agent, client_config::ClientConfig, spool::Entry};

pub struct Prepared {
    pub entry: Entry,
    pub workspace: Workspace,
}

/// Where the agent works, for Windsurf's rules file.
pub struct Workspace {
    /// The checkout's root (a linked worktree's own), else the working directory.
    pub root: PathBuf,
    /// The repository's shared git directory, when in one.
    pub git_common_dir: Option<PathBuf>,
}

pub fn read(
    agent: Agent,
    config: &ClientConfig,
    filter: JoinHandle<PrivacyFilter>,
) -> anyhow::Result<Prepared> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("reading stdin")?;
    let at = chrono::Utc::now().timestamp_millis();
    let key = uuid::Uuid::new_v4().to_string();
    let mut body: Value = serde_json::from_slice(&input).context("the hook input is not JSON")?;
    if agent == Agent::ClaudeCode {
        add_last_assistant_message(&mut body);
    }
    let cwd = query::workdir(agent, &body);
    let repo = git::discover(&cwd);
    let file_hash = file_hash::of_event(&body, &cwd);
    let changed = match (&repo, is_session_start(&body)) {
        (Some(repo), true) => changed::files(&repo.worktree, &repo.git_dir),
        _ => vec![],
    };
    let query = query::build(
        config.project.as_deref(),
        repo.as_ref(),
        &cwd,
        file_hash.as_deref(),
        &changed,
    );
    let filter = filter
        .join()
        .map_err(|_| anyhow::anyhow!("the privacy filter did not build"))?;
    filter.filter_value(&mut body);
    let body = RawValue::from_string(serde_json::to_string(&body)?)?;
    Ok(Prepared {
        entry: Entry::new(agent.slug(), &key, at, &query, body),
        workspace: Workspace {
            git_common_dir: repo.as_ref().map(|r| r.common_dir.clone()),
            root: repo.map(|r| r.worktree).unwrap_or(cwd),
        },
    })
}

/// A session's first event (`SessionStart`, Cursor's `sessionStart`).
fn is_session_start(body: &Value) -> bool {
    body["hook_event_name"]
        .as_str()
        .is_some_and(|e| e.eq_ignore_ascii_case("SessionStart"))
}

/// Claude Code's Stop and SubagentStop may lack `last_assistant_message`:
/// then, and only then, the transcript's tail is read.
fn add_last_assistant_message(body: &mut Value) {
    let Some(map) = body.as_object_mut() else { return };
    let is_stop = matches!(
        map.get("hook_event_name").and_then(Value::as_str),
        Some("Stop" | "SubagentStop")
    );
    let missing = map
        .get("last_assistant_message")
        .is_none_or(|m| m.is_null() || m.as_str().is_some_and(str::is_empty));
    if !is_stop || !missing {
        return;
    }
    let path = map
        .get("agent_transcript_path")
        .filter(|_| map.get("hook_event_name").and_then(Value::as_str) == Some("SubagentStop"))
        .or_else(|| map.get("transcript_path"))
        .and_then(Value::as_str);
    if let Some(text) = path.and_then(|p| transcript::last_assistant_text(p.as_ref())) {
        map.insert("last_assistant_message".into(), Value::String(text));
    }
}
