//! The checkout a session works on: its repository, HEAD commit and branch
//! (sent by the hook client), and the commits a project was seen at. A
//! file version a tool ran on is the memory lifecycle's
//! (`cairn_core::memory::lifecycle::read`).

use sqlx::PgPool;
use uuid::Uuid;

/// What the hook client read from the repository's files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkout {
    pub remote: Option<String>,
    pub root: Option<String>,
    /// A full or abbreviated commit id, lowercase hex.
    pub head: Option<String>,
    pub branch: Option<String>,
}

/// Keeps the session's checkout current and the commit known to the
/// project. Writes nothing when nothing changed.
#[tracing::instrument(skip(pool, checkout))]
pub async fn record(
    pool: &PgPool,
    project_id: Uuid,
    session_id: Uuid,
    checkout: &Checkout,
) -> sqlx::Result<()> {
    sqlx::query(
        "WITH moved AS (
             UPDATE sessions SET repo_remote = coalesce($3, repo_remote), repo_root = coalesce($4, repo_root),
                 head_commit = coalesce($5, head_commit), branch = coalesce($6, branch)
             WHERE id = $2 AND project_id = $1
               AND (head_commit IS DISTINCT FROM coalesce($5, head_commit)
                    OR branch IS DISTINCT FROM coalesce($6, branch)
                    OR repo_root IS DISTINCT FROM coalesce($4, repo_root)
                    OR repo_remote IS DISTINCT FROM coalesce($3, repo_remote))
             RETURNING id
         )
         INSERT INTO project_commits (project_id, commit_sha, branch)
         SELECT $1, $5, $6 WHERE $5 IS NOT NULL AND EXISTS (SELECT 1 FROM moved)
         ON CONFLICT (project_id, commit_sha) DO NOTHING",
    )
    .bind(project_id)
    .bind(session_id)
    .bind(&checkout.remote)
    .bind(&checkout.root)
    .bind(&checkout.head)
    .bind(&checkout.branch)
    .execute(pool)
    .await?;
    Ok(())
}

/// The end of the time the commit `prefix` names (7 to 64 hex digits) was
/// the project's newest: when the project first saw a later commit, or now
/// when none. Memory "as of" a commit is what was written up to then — what
/// was learned while working on it included. `Ok(None)` when the project
/// never saw the commit, `Err(n)` when `n` > 1 commits start with it.
#[tracing::instrument(skip(pool))]
pub async fn commit_seen_at(
    pool: &PgPool,
    project_id: Uuid,
    prefix: &str,
) -> sqlx::Result<Result<Option<chrono::DateTime<chrono::Utc>>, usize>> {
    let until: Vec<chrono::DateTime<chrono::Utc>> = sqlx::query_scalar(
        "SELECT coalesce((SELECT min(n.first_seen_at) FROM project_commits n
                          WHERE n.project_id = c.project_id AND n.first_seen_at > c.first_seen_at), now())
         FROM project_commits c
         WHERE c.project_id = $1 AND c.commit_sha LIKE $2 || '%'
         ORDER BY c.first_seen_at LIMIT 2",
    )
    .bind(project_id)
    .bind(prefix)
    .fetch_all(pool)
    .await?;
    Ok(match until.as_slice() {
        [] => Ok(None),
        [at] => Ok(Some(*at)),
        more => Err(more.len()),
    })
}
