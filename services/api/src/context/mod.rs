//! The context given back to agents at SessionStart: the project's recent
//! summaries and observations as markdown, or a one-line note when there is
//! no memory yet.

use std::fmt::Write;

use sqlx::PgPool;
use uuid::Uuid;

use crate::store::observations;

/// Opening tag of injected context; the privacy filter strips it on ingest,
/// so memory given back never echoes into storage.
pub const OPEN_TAG: &str = "<cairn-context>";
pub const CLOSE_TAG: &str = "</cairn-context>";

pub async fn session_start_context(pool: &PgPool, project_id: Uuid) -> sqlx::Result<String> {
    let summaries = observations::recent_summaries(pool, project_id, 5).await?;
    let observations = observations::recent(pool, project_id, 15).await?;
    let mut out = String::new();
    let _ = writeln!(out, "{OPEN_TAG}");
    if summaries.is_empty() && observations.is_empty() {
        let _ = writeln!(
            out,
            "Cairn: no memory for this project yet; it will build up as you work."
        );
    } else {
        let _ = writeln!(out, "# Project memory (Cairn)");
        if !summaries.is_empty() {
            let _ = writeln!(out, "\n## Recent work");
            for s in &summaries {
                let when = s.created_at.format("%Y-%m-%d %H:%M");
                let _ = writeln!(
                    out,
                    "- {when} ({}): {} — {}",
                    s.scope,
                    one_line(&s.request),
                    one_line(&s.completed)
                );
            }
        }
        if !observations.is_empty() {
            let _ = writeln!(out, "\n## Recent observations");
            for o in &observations {
                let when = o.created_at.format("%Y-%m-%d %H:%M");
                let _ = writeln!(out, "- [{}] {when} {}: {}", o.id, o.kind, one_line(&o.title));
            }
        }
    }
    let _ = write!(out, "{CLOSE_TAG}");
    Ok(out)
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > 200 {
        line.chars().take(200).collect::<String>() + "…"
    } else {
        line.to_string()
    }
}
