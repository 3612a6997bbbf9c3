//! The checkout a session works on: its repository, HEAD commit and branch
//! (sent by the hook client), and the commits a project was seen at.

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

/// A version of a file a tool ran on (`fileHash` of a hook call).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSeen {
    /// Relative to the session's directory when under it.
    pub path: String,
    /// SHA-256, lowercase hex.
    pub hash: String,
    /// Re-check the memories of the file against this version (a Read; the
    /// agent's own edits are the completion's to re-mark).
    pub recheck: bool,
}

/// Records the version (`file_versions`, with the session's HEAD) and, when
/// asked, marks stale the project's live memories drawn from another
/// version of the file (`file_refs` names the file with another hash), each
/// with a `memory_changes` row — unless this session itself recorded this
/// version before (it edited the file and reads its own result: the turn's
/// completion re-marks those memories, superseding where it can). Memories without a recorded version of the
/// file are left alone: nothing says they are out of date.
#[tracing::instrument(skip(pool, seen), fields(path = %seen.path))]
pub async fn file_seen(
    pool: &PgPool,
    project_id: Uuid,
    session_id: Uuid,
    seen: &FileSeen,
) -> sqlx::Result<u64> {
    sqlx::query_scalar(
        "WITH seen AS (
             INSERT INTO file_versions AS v (project_id, path, hash, commit_sha, session_id)
             SELECT $1, $3, $4, s.head_commit, s.id FROM sessions s WHERE s.id = $2 AND s.project_id = $1
             ON CONFLICT (project_id, path, hash) DO UPDATE
                 SET seen_at = now(), session_id = EXCLUDED.session_id, commit_sha = EXCLUDED.commit_sha
             RETURNING v.path, v.hash
         ), outdated AS (
             UPDATE observations o SET state = 'stale', state_changed_at = now(), updated_at = now()
             FROM seen
             WHERE $5 AND o.project_id = $1 AND o.state = 'live'
               -- A version this session made (its own edit) is the completion's to re-mark.
               AND NOT EXISTS (SELECT 1 FROM file_versions p
                               WHERE p.project_id = $1 AND p.path = $3 AND p.hash = $4 AND p.session_id = $2)
               AND o.file_refs @> jsonb_build_array(jsonb_build_object('path', seen.path))
               AND NOT o.file_refs @> jsonb_build_array(jsonb_build_object('path', seen.path, 'hash', seen.hash))
             RETURNING o.id, o.team_id
         ), logged AS (
             INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
                                         reason, actor)
             SELECT gen_random_uuid(), team_id, $1, id, 'stale', 'live', 'stale',
                    'its file was read at another version', 'api'
             FROM outdated
         )
         SELECT count(*) FROM outdated",
    )
    .bind(project_id)
    .bind(session_id)
    .bind(&seen.path)
    .bind(&seen.hash)
    .bind(seen.recheck)
    .fetch_one(pool)
    .await
    .map(|n: i64| n as u64)
}
