//! Memories about one file, answered at PreToolUse before the agent reads
//! or changes it: the few newest `live` observations about that file, in a
//! small token budget, within a deadline (a late answer is worse than none,
//! the agent is waiting), and nothing at all when there are none or the
//! project opted out (`projects.file_memories`).

use crate::tenancy::Viewer;
use std::time::Duration;

use cairn_shared::paths::relative;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use super::focus::Focus;
use super::prompt;
use crate::store::file_memories;

/// The tools whose target file gets its memories (Claude Code's names).
pub const FILE_TOOLS: [&str; 5] = ["Read", "Edit", "MultiEdit", "Write", "NotebookEdit"];
/// Memories shown for one file, at most.
pub const LIMIT: i64 = 3;
/// Their token budget, all together.
pub const BUDGET_TOKENS: usize = 400;

/// The file a tool call is about: `tool_input.file_path` (or
/// `notebook_path`) of one of [`FILE_TOOLS`].
pub fn target<'a>(tool_name: Option<&str>, payload: &'a Value) -> Option<&'a str> {
    if !FILE_TOOLS.contains(&tool_name?) {
        return None;
    }
    let input = payload.get("tool_input")?;
    ["file_path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())
}

/// The memories about `path`, rendered, or `None` (none, opted out, failed, late).
pub async fn for_file(
    pool: &PgPool,
    project_id: Uuid,
    path: &str,
    cwd: Option<&str>,
    deadline: Duration,
    viewer: Viewer,
) -> Option<String> {
    match tokio::time::timeout(deadline, lookup(pool, project_id, path, cwd, viewer)).await {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "file memories failed; answering without them");
            None
        }
        Err(_) => {
            tracing::info!(
                ?deadline,
                "file memories missed their deadline; answering without them"
            );
            None
        }
    }
}

async fn lookup(
    pool: &PgPool,
    project_id: Uuid,
    path: &str,
    cwd: Option<&str>,
    viewer: Viewer,
) -> sqlx::Result<Option<String>> {
    if !file_memories::enabled(pool, project_id).await? {
        return Ok(None);
    }
    let relative = relative(path, cwd);
    let mut paths = vec![path.to_string()];
    if relative != path {
        paths.push(relative.to_string());
    }
    let found = file_memories::about(pool, project_id, &paths, relative, LIMIT, viewer).await?;
    // The path is the agent's own input; it still must not close the block.
    let shown = relative.replace(['<', '>', '\n', '\r'], "_");
    Ok(prompt::render_titled(
        &format!("# Memory about {shown} (Cairn)"),
        &found,
        BUDGET_TOKENS,
        &Focus::of(relative),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_target_is_the_file_of_a_file_tool() {
        let payload = json!({ "tool_input": { "file_path": "/w/app/src/a.rs" } });
        assert_eq!(target(Some("Read"), &payload), Some("/w/app/src/a.rs"));
        assert_eq!(target(Some("Bash"), &payload), None);
        assert_eq!(target(None, &payload), None);
        let notebook = json!({ "tool_input": { "notebook_path": "/w/n.ipynb" } });
        assert_eq!(target(Some("NotebookEdit"), &notebook), Some("/w/n.ipynb"));
        assert_eq!(target(Some("Write"), &json!({ "tool_input": {} })), None);
    }
}
