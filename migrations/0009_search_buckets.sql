-- Search finds a project's newest matches of a query without reading its
-- older matches: every observation carries the key of its project's day
-- (`search_day`) and week (`search_week`), and one GIN over both keys and
-- `search` finds the matches of one day or week of one project directly.
-- Search walks back from its clock in widening rings of days, then of
-- weeks, and stops at the ring where it has enough matches; see
-- services/api/src/search/sql.rs.
--
-- A key is the first 64 bits of md5('<project id>/<days>/<period number>'),
-- periods of `days` UTC days counted from the epoch; the project is still
-- checked row by row, so keys that collide never mix projects.

CREATE OR REPLACE FUNCTION search_bucket(project uuid, at timestamptz, days integer) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    -- The epoch of a timestamptz does not depend on the time zone, so the
    -- key depends on the arguments alone (extract is only stable because
    -- other fields do).
    SELECT ('x' || left(md5(project::text || '/' || days || '/'
                            || floor(extract(epoch FROM at) / 86400 / days)::bigint::text), 16))::bit(64)::bigint
$$;

ALTER TABLE observations
    ADD COLUMN IF NOT EXISTS search_day bigint GENERATED ALWAYS AS (search_bucket(project_id, created_at, 1)) STORED,
    ADD COLUMN IF NOT EXISTS search_week bigint GENERATED ALWAYS AS (search_bucket(project_id, created_at, 7)) STORED;

CREATE INDEX IF NOT EXISTS observations_period_search_idx
    ON observations USING gin (search_day, search_week, search);
