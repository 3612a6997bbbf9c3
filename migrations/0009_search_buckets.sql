-- Search finds a project's newest matches of a query without reading its
-- older matches: every observation carries the key of its project's day
-- (`search_bucket`), and a GIN over (search_bucket, search) finds the
-- matches of one day of one project directly. Search walks days back from
-- its clock in widening rings (1, 1, 2, 4 … 128 days) and stops at the ring
-- where it has enough matches; see services/api/src/search/sql.rs.
--
-- The key is the first 64 bits of md5(project id '/' day number), the day
-- counted in UTC days since the epoch; the project is still checked row by
-- row, so two keys that collide can never mix projects.

CREATE OR REPLACE FUNCTION search_bucket(project uuid, at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    -- The epoch of a timestamptz does not depend on the time zone, so the
    -- result only depends on the arguments (extract is stable only because
    -- other fields do).
    SELECT ('x' || left(md5(project::text || '/' || floor(extract(epoch FROM at) / 86400)::bigint::text), 16))
           ::bit(64)::bigint
$$;

ALTER TABLE observations
    ADD COLUMN IF NOT EXISTS search_bucket bigint
    GENERATED ALWAYS AS (search_bucket(project_id, created_at)) STORED;

CREATE INDEX IF NOT EXISTS observations_bucket_search_idx ON observations USING gin (search_bucket, search);
