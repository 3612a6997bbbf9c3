//! A project's most important live memories, for the section `cairn sync`
//! writes into CLAUDE.md / AGENTS.md: decisions and bug fixes first, then by
//! how often they were retrieved, then newest.

use sqlx::PgPool;
use uuid::Uuid;

use crate::context::gather::ObservationItem;

/// Ranks kinds: what a newcomer to the code most needs to know first.
const KIND_WEIGHT: &str = "CASE kind WHEN 'decision' THEN 4 WHEN 'bugfix' THEN 3 WHEN 'discovery' THEN 2
     WHEN 'feature' THEN 2 ELSE 1 END";

/// At most `limit` live observations (no plans), most important first.
#[tracing::instrument(skip(pool))]
pub async fn top(pool: &PgPool, project_id: Uuid, limit: i64) -> sqlx::Result<Vec<ObservationItem>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT o.id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at, state
         FROM observations o LEFT JOIN memory_retrievals r ON r.observation_id = o.id
         WHERE o.project_id = $1 AND state = 'live' AND kind <> 'plan' AND title <> ''
           -- written into a file the repository shares: the team's memory only
           AND o.visibility = 'team'
         ORDER BY {KIND_WEIGHT} DESC, coalesce(r.retrieved_count, 0) DESC, created_at DESC, o.id DESC
         LIMIT $2"
    )))
    .bind(project_id)
    .bind(limit)
    .fetch_all(pool)
    .await
}
