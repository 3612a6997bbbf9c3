//! `stale` when a file is read at another version: the hook's `fileHash`
//! of a Read is recorded (`file_versions`), and the project's live memories
//! drawn from another version of that file go stale in the same statement.

use sqlx::PgPool;
use uuid::Uuid;

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
