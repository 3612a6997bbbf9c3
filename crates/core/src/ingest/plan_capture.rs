//! Plan capture: a Write (or Edit) of a file in an agent's plan directory
//! stores the plan, and `ExitPlanMode` stores the approved version. One plan
//! per file per session: writing it again updates it (its version count
//! goes up), and the approval replaces the text of the session's latest
//! plan. A plan is an observation of kind `plan`, so search finds it and
//! context shows it under "Plans"; it carries its turn (`prompt_number`).
//! Done in the ingest transaction, no model needed.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{EventKind, IncomingEvent};
use crate::{store::plans, tenancy::ProjectRef};

/// Where agents keep plans (anywhere in a path: the home directory's or a repository's).
pub const PLAN_DIRS: [&str; 5] = [
    ".claude/plans/",
    ".cursor/plans/",
    ".codex/plans/",
    ".gemini/plans/",
    ".windsurf/plans/",
];

/// What an event does to a plan.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanEvent<'a> {
    /// The whole plan file, as written.
    Written { path: &'a str, text: &'a str },
    /// Part of the plan file replaced (Edit's `old_string` → `new_string`).
    Edited {
        path: &'a str,
        old: &'a str,
        new: &'a str,
    },
    /// The plan the user approved (`ExitPlanMode`'s `plan`).
    Approved { text: &'a str },
}

pub fn in_plan_dir(path: &str) -> bool {
    PLAN_DIRS
        .iter()
        .any(|dir| path.starts_with(dir) || path.contains(&format!("/{dir}")))
}

/// The plan change a tool event makes, if any: successful tool calls only.
pub fn detect(ev: &IncomingEvent) -> Option<PlanEvent<'_>> {
    if ev.kind != EventKind::PostTool {
        return None;
    }
    let input = ev.payload.get("tool_input")?;
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    match ev.tool_name.as_deref()? {
        "ExitPlanMode" => text("plan")
            .filter(|t| !t.trim().is_empty())
            .map(|text| PlanEvent::Approved { text }),
        "Write" => {
            let path = text("file_path").filter(|p| in_plan_dir(p))?;
            Some(PlanEvent::Written {
                path,
                text: text("content")?,
            })
        }
        "Edit" => {
            let path = text("file_path").filter(|p| in_plan_dir(p))?;
            Some(PlanEvent::Edited {
                path,
                old: text("old_string")?,
                new: text("new_string")?,
            })
        }
        _ => None,
    }
}

/// Stores what `ev` does to a plan of its session, if anything.
pub async fn capture(
    conn: &mut PgConnection,
    project: ProjectRef,
    session_id: Option<Uuid>,
    prompt_number: Option<i32>,
    ev: &IncomingEvent,
) -> sqlx::Result<()> {
    let (Some(change), Some(session_id)) = (detect(ev), session_id) else {
        return Ok(());
    };
    let at = plans::At {
        project,
        session_id,
        prompt_number,
    };
    match change {
        PlanEvent::Written { path, text } => plans::write(conn, &at, path, &title(text, path), text).await,
        PlanEvent::Edited { path, old, new } => plans::edit(conn, &at, path, old, new).await,
        PlanEvent::Approved { text } => plans::approve(conn, &at, &title(text, "Approved plan"), text).await,
    }
}

/// The plan's first heading, else `fallback`'s file name.
pub fn title(text: &str, fallback: &str) -> String {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix('#').map(|h| h.trim_start_matches('#').trim()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| fallback.rsplit('/').next().unwrap_or(fallback))
        .chars()
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_directories_are_recognised_anywhere_in_a_path() {
        assert!(in_plan_dir("/home/dev/.claude/plans/fix-parser.md"));
        assert!(in_plan_dir(".cursor/plans/p.md"));
        assert!(in_plan_dir("/w/app/.codex/plans/a.md"));
        assert!(!in_plan_dir("/w/app/plans/a.md"));
        assert!(!in_plan_dir("/w/app/src/claude/plans.rs"));
    }

    #[test]
    fn the_title_is_the_first_heading_or_the_file_name() {
        assert_eq!(title("intro\n## Fix the parser\n", "x.md"), "Fix the parser");
        assert_eq!(title("no heading", "/h/.claude/plans/fix.md"), "fix.md");
        assert_eq!(title("#\n", "p.md"), "p.md");
    }
}
