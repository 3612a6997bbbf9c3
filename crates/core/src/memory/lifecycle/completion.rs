//! `stale` and `supersede` when a turn changes files: the CTEs a job's
//! completion statement (`generation::job::write`) runs between writing its
//! observations and the rest. They read the completion's `changed_files`
//! (each new observation that modified files, the paths it changed and the
//! versions it left) and `$14`, the job's edits. An older live memory of
//! those files whose lines no edit touched stays live, tied to the new
//! version (`file_refs_after_edits`, migration 0020); any other becomes
//! `superseded` by the new observation (same kind, and it modified the file
//! too) or `stale`, with its `memory_changes` row. Only a memory at least
//! as widely seen supersedes: a member's private observation (private-first)
//! makes the team's memory `stale`, never `superseded` by a memory the team
//! cannot read. A memory another completion is re-marking is skipped
//! (`SKIP LOCKED`): that one marks it.

/// Begins with `, code_locked AS (`: it follows the completion's CTEs.
pub const REMARK_ON_COMPLETION: &str = "
    ), code_locked AS (
        SELECT o.id, c.id AS new_id, c.paths,
            o.kind = c.kind AND o.files_modified && c.paths
              AND (c.visibility = 'team' OR (o.visibility = 'private' AND o.member_id = c.member_id)) AS replaced,
            file_refs_after_edits(o.file_refs, o.files_read || o.files_modified, c.paths, $14, c.fresh) AS retied
        FROM observations o, changed_files c
        WHERE o.project_id = c.project_id AND o.state = 'live' AND o.kind <> 'plan'
          AND (o.files_read || o.files_modified) && c.paths
        FOR UPDATE OF o SKIP LOCKED
    ), code_retied AS (
        UPDATE observations o SET file_refs = c.retied, updated_at = now()
        FROM code_locked c
        WHERE o.id = c.id AND o.state = 'live' AND c.retied IS NOT NULL
    ), code_changed AS (
        UPDATE observations o SET
            state = CASE WHEN c.replaced THEN 'superseded' ELSE 'stale' END,
            replaced_by = CASE WHEN c.replaced THEN c.new_id END,
            state_changed_at = now(), updated_at = now()
        FROM code_locked c
        WHERE o.id = c.id AND o.state = 'live' AND c.retied IS NULL
        RETURNING o.id, o.team_id, o.project_id, o.state, o.replaced_by
    ), code_changes_logged AS (
        INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
            related_id, reason, actor)
        SELECT gen_random_uuid(), c.team_id, c.project_id, c.id,
            CASE c.state WHEN 'superseded' THEN 'supersede' ELSE 'stale' END, 'live', c.state, c.replaced_by,
            'a later turn changed its files', 'generator'
        FROM code_changed c
";
