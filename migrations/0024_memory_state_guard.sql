-- The memory lifecycle in the schema: an observation's state moves only
-- along the transitions `cairn_core::memory::lifecycle::TRANSITIONS` lists
-- (a test compares the two). Any other move is refused with a check
-- violation (SQLSTATE 23514), as `generation_jobs` refuses impossible
-- statuses.

CREATE OR REPLACE FUNCTION memory_state_move_allowed(from_state text, to_state text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT from_state = to_state OR (from_state, to_state) IN (
        ('live', 'stale'), ('live', 'superseded'), ('live', 'merged'), ('stale', 'merged'),
        ('live', 'archived'), ('stale', 'archived'), ('superseded', 'archived'),
        ('stale', 'live'), ('superseded', 'live'), ('merged', 'live'), ('merged', 'stale'),
        ('archived', 'live'), ('archived', 'stale'), ('archived', 'superseded'))
$$;

CREATE OR REPLACE FUNCTION observations_state_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT memory_state_move_allowed(OLD.state, NEW.state) THEN
        RAISE EXCEPTION 'an observation cannot move from % to %', OLD.state, NEW.state
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS observations_state_guard ON observations;
CREATE TRIGGER observations_state_guard
    BEFORE UPDATE OF state ON observations
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION observations_state_guard();
