-- A memory written by hand (`POST /v1/memories`) names its author's member,
-- like a generated one, so attribution, filters by person and erasure see
-- it. Writing one by hand is sharing it: it is the team's in a private-first
-- project too (the visibility trigger leaves manual memories alone).
CREATE OR REPLACE FUNCTION memory_visibility_at_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.member_id IS NOT NULL
       AND NOT (TG_TABLE_NAME = 'observations' AND to_jsonb(NEW) ->> 'origin' = 'manual')
       AND EXISTS (
        SELECT 1 FROM projects p
        WHERE p.id = NEW.project_id AND p.memory_visibility = 'private-first'
          AND NOT (TG_TABLE_NAME = 'observations' AND to_jsonb(NEW) ->> 'kind' = ANY (p.promote_kinds)))
    THEN
        NEW.visibility := 'private';
    END IF;
    RETURN NEW;
END
$$;

UPDATE observations o SET member_id = t.member_id
FROM api_tokens t
WHERE o.origin = 'manual' AND o.member_id IS NULL AND t.id = o.author_token_id AND t.member_id IS NOT NULL;
