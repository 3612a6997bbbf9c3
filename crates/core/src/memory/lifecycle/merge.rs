//! `merge` (consolidation): an observation that repeats an older one of its project —
//! the same kind, the same files, a title with mostly the same words
//! (`title_overlap` ≥ `TITLE_OVERLAP`) and, when both have vectors of the
//! same model, a close meaning (`vector_cosine` ≥ `COSINE`) — takes its
//! place. The older one becomes `merged` with `replaced_by` set to the
//! newer, which cites it in `metadata.merged_from`; nothing is deleted.
//! Observations without files are never merged: a title alone is too thin.
//! Nor is a memory merged into one fewer people see (a private one, in a
//! `private-first` project): the team would lose it.
//!
//! Each pass reads only observations not compared yet (`consolidated_at`
//! NULL, migration 0017), oldest first, and marks them compared. An older
//! observation is merged into its newest near-duplicate; one that is both
//! merged and kept in the same pass (a chain A → B → C where C does not
//! repeat A) waits: it is merged and kept in different passes.

use sqlx::PgPool;

/// Observations compared per statement.
pub const BATCH: i64 = 500;
/// Least share of title words in common for a near-duplicate.
pub const TITLE_OVERLAP: f64 = 0.6;
/// Least cosine similarity of two vectors for a near-duplicate.
pub const COSINE: f64 = 0.85;

/// What one statement did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Once {
    pub checked: i64,
    pub merged: i64,
}

/// The statement: `$1` batch, `$2` actor, `$3` title overlap, `$4` cosine.
pub const CONSOLIDATE_SQL: &str = "
WITH fresh AS (
    SELECT o.id, o.project_id, o.kind, o.title, o.state, o.created_at, o.visibility, o.member_id,
           ARRAY(SELECT DISTINCT f FROM unnest(o.files_read || o.files_modified) f ORDER BY f) AS files
    FROM observations o
    WHERE o.consolidated_at IS NULL
    ORDER BY o.created_at LIMIT $1
    FOR UPDATE SKIP LOCKED
), pairs AS (
    SELECT DISTINCT ON (old.id) old.id AS old_id, old.state AS old_state, new.id AS new_id
    FROM fresh new
    JOIN observations old
      ON old.project_id = new.project_id AND old.kind = new.kind AND old.id <> new.id
     AND (old.files_read || old.files_modified) @> new.files
     AND (old.created_at, old.id) < (new.created_at, new.id)
    LEFT JOIN observation_embeddings ne ON ne.observation_id = new.id
    LEFT JOIN observation_embeddings oe ON oe.observation_id = old.id AND oe.model = ne.model
    WHERE new.state IN ('live', 'stale') AND cardinality(new.files) > 0
      AND old.state IN ('live', 'stale')
      -- never hidden behind a memory fewer people see (a private-first project)
      AND (new.visibility = 'team' OR (old.visibility = 'private' AND old.member_id = new.member_id))
      AND ARRAY(SELECT DISTINCT f FROM unnest(old.files_read || old.files_modified) f ORDER BY f) = new.files
      AND title_overlap(old.title, new.title) >= $3
      AND (oe.embedding IS NULL OR vector_cosine(oe.embedding, ne.embedding) >= $4)
    ORDER BY old.id, new.created_at DESC, new.id DESC
), settled AS (
    -- A row is changed once per statement: one both merged and kept waits.
    SELECT * FROM pairs WHERE old_id NOT IN (SELECT new_id FROM pairs)
), cites AS (
    SELECT new_id, jsonb_agg(old_id ORDER BY old_id) AS ids FROM settled GROUP BY new_id
), targets AS (
    SELECT id FROM fresh UNION SELECT old_id FROM settled
), changed AS (
    -- One UPDATE for every role a row plays: compared (fresh), merged (old), citing (kept).
    UPDATE observations o SET
        consolidated_at = CASE WHEN o.id IN (SELECT id FROM fresh) THEN now() ELSE o.consolidated_at END,
        state = CASE WHEN o.state = s.old_state THEN 'merged' ELSE o.state END,
        state_changed_at = CASE WHEN o.state = s.old_state THEN now() ELSE o.state_changed_at END,
        replaced_by = CASE WHEN o.state = s.old_state THEN s.new_id ELSE o.replaced_by END,
        metadata = CASE WHEN c.new_id IS NULL THEN o.metadata
                        ELSE jsonb_set(o.metadata, '{merged_from}',
                                       coalesce(o.metadata -> 'merged_from', '[]'::jsonb) || c.ids) END
    FROM targets t LEFT JOIN settled s ON s.old_id = t.id LEFT JOIN cites c ON c.new_id = t.id
    WHERE o.id = t.id
    RETURNING o.id, o.team_id, o.project_id, o.state, s.old_state, s.new_id
), logged AS (
    INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
                                related_id, reason, actor)
    SELECT gen_random_uuid(), team_id, project_id, id, 'merge', old_state, 'merged', new_id,
           'near-duplicate of a newer observation: same kind and files, similar title', $2
    FROM changed WHERE new_id IS NOT NULL AND state = 'merged'
    RETURNING 1
)
SELECT (SELECT count(*) FROM fresh) AS checked, (SELECT count(*) FROM logged) AS merged";

/// One batch.
#[tracing::instrument(skip(pool))]
pub async fn once(pool: &PgPool, actor: &str) -> sqlx::Result<Once> {
    sqlx::query_as(CONSOLIDATE_SQL)
        .bind(BATCH)
        .bind(actor)
        .bind(TITLE_OVERLAP)
        .bind(COSINE)
        .fetch_one(pool)
        .await
}
