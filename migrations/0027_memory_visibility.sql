-- Private until shared (a project setting): in a `private-first` project a
-- memory drawn from a member's sessions is visible to that member (and to
-- admins, who review) until it is promoted to the team — by its author, by
-- the project's rule (kinds promoted at once, or no objection within N
-- days), or by a reviewer. A rejected memory stays private and is never
-- promoted by the rule. Raw prompts and events of such a project are
-- visible to their author and to admins only. `team` projects (the
-- default) keep every memory visible to the team, as before.

ALTER TABLE projects
    ADD COLUMN IF NOT EXISTS memory_visibility text NOT NULL DEFAULT 'team'
        CHECK (memory_visibility IN ('team', 'private-first')),
    ADD COLUMN IF NOT EXISTS promote_kinds text[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS promote_after_days integer
        CHECK (promote_after_days IS NULL OR promote_after_days BETWEEN 1 AND 365);

ALTER TABLE observations
    ADD COLUMN IF NOT EXISTS visibility text NOT NULL DEFAULT 'team' CHECK (visibility IN ('private', 'team')),
    ADD COLUMN IF NOT EXISTS rejected_at timestamptz,
    ADD COLUMN IF NOT EXISTS promoted_at timestamptz,
    ADD COLUMN IF NOT EXISTS promoted_by text;
ALTER TABLE summaries
    ADD COLUMN IF NOT EXISTS visibility text NOT NULL DEFAULT 'team' CHECK (visibility IN ('private', 'team'));
CREATE INDEX IF NOT EXISTS observations_private_idx ON observations (project_id, created_at)
    WHERE visibility = 'private';

-- A memory of a member's session in a private-first project starts private,
-- unless its kind is one the project promotes at once. Fires after
-- `*_member` (triggers of one timing fire by name), which fills member_id.
CREATE OR REPLACE FUNCTION memory_visibility_at_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.member_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM projects p
        WHERE p.id = NEW.project_id AND p.memory_visibility = 'private-first'
          AND NOT (TG_TABLE_NAME = 'observations' AND to_jsonb(NEW) ->> 'kind' = ANY (p.promote_kinds)))
    THEN
        NEW.visibility := 'private';
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS observations_visibility ON observations;
CREATE TRIGGER observations_visibility BEFORE INSERT ON observations
    FOR EACH ROW EXECUTE FUNCTION memory_visibility_at_write();
DROP TRIGGER IF EXISTS summaries_visibility ON summaries;
CREATE TRIGGER summaries_visibility BEFORE INSERT ON summaries
    FOR EACH ROW EXECUTE FUNCTION memory_visibility_at_write();
