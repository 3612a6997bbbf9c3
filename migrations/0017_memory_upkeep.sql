-- Memory upkeep: consolidation of near-duplicates and retirement by a
-- per-project retention policy, both run by the generator's sweeper
-- (services/generator/src/upkeep). Every change is a `memory_changes` row
-- (migration 0014) and can be reverted through the API.

-- When consolidation last compared this observation with the project's
-- older ones; NULL: not yet (new rows), so each pass reads only new rows.
ALTER TABLE observations ADD COLUMN IF NOT EXISTS consolidated_at timestamptz;
CREATE INDEX IF NOT EXISTS observations_unconsolidated_idx
    ON observations (created_at) WHERE consolidated_at IS NULL;

-- The live observations about a file: what a completion re-marks when a
-- turn changes the file, what PreToolUse gives back and what consolidation
-- compares. The whole-table index (migration 0004) also holds every
-- superseded and stale memory of a file edited a thousand times.
CREATE INDEX IF NOT EXISTS observations_live_files_idx
    ON observations USING gin ((files_read || files_modified)) WHERE state = 'live';

-- Observations older than this many days, and not retrieved for as long,
-- are archived: kept and retrievable by id, never injected or searched.
-- NULL (the default): kept for ever.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS retention_days integer;
DO $$ BEGIN
    ALTER TABLE projects ADD CONSTRAINT projects_retention_days_check
        CHECK (retention_days IS NULL OR retention_days BETWEEN 1 AND 36500);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

-- The share of words two titles have in common (Jaccard over their English
-- lexemes): 1 for the same words in any order or inflection, 0 for none.
CREATE OR REPLACE FUNCTION title_overlap(a text, b text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH x AS (SELECT lexeme FROM unnest(to_tsvector('english', a))),
         y AS (SELECT lexeme FROM unnest(to_tsvector('english', b)))
    SELECT coalesce((SELECT count(*) FROM (SELECT lexeme FROM x INTERSECT SELECT lexeme FROM y) i)::float8
                    / nullif((SELECT count(*) FROM (SELECT lexeme FROM x UNION SELECT lexeme FROM y) u), 0), 0)
$$;

-- Cosine similarity of two vectors of the same length (plain arrays: no
-- extension needed); NULL when either is missing or all zeros.
CREATE OR REPLACE FUNCTION vector_cosine(a real[], b real[]) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT sum(x::float8 * y) / nullif(sqrt(sum(x::float8 * x)) * sqrt(sum(y::float8 * y)), 0)
    FROM unnest(a, b) AS t(x, y)
    WHERE cardinality(a) = cardinality(b)
$$;

-- Retrieval (search hits, injected context) feeds decay and retirement. It
-- is written on the read path, so it lives in a narrow table of its own:
-- updating the wide, many-indexed observation row on every search would
-- cost a new row version and index entries each time. Replaces the columns
-- migration 0014 put on observations, which nothing wrote.
CREATE TABLE IF NOT EXISTS memory_retrievals (
    observation_id    uuid PRIMARY KEY REFERENCES observations (id) ON DELETE CASCADE,
    project_id        uuid NOT NULL,
    retrieved_count   integer NOT NULL DEFAULT 0,
    last_retrieved_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE observations DROP COLUMN IF EXISTS retrieved_count, DROP COLUMN IF EXISTS last_retrieved_at;
