-- Daily usage counted in sixteen rows per (project, day) instead of one.
--
-- Every job's usage is added to its project's day by a trigger deferred to
-- commit (migration 0008). With one row per day, each completion waited for
-- the previous one's lock on that row until it had committed, so a
-- project's completions committed one at a time. The shard is picked from
-- the job's id, so concurrent completions mostly add to different rows;
-- readers sum a day's shards. Idempotent: every statement may run again.

ALTER TABLE llm_usage_daily ADD COLUMN IF NOT EXISTS shard smallint NOT NULL DEFAULT 0
    CHECK (shard BETWEEN 0 AND 15);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                   WHERE c.relname = 'llm_usage_daily_pkey' AND i.indnatts = 3) THEN
        ALTER TABLE llm_usage_daily DROP CONSTRAINT llm_usage_daily_pkey,
            ADD PRIMARY KEY (project_id, day, shard);
    END IF;
END $$;

CREATE OR REPLACE FUNCTION llm_usage_daily_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    heuristic boolean := coalesce(NEW.usage ->> 'provider', '') = 'heuristic';
BEGIN
    IF jsonb_typeof(NEW.usage) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    INSERT INTO llm_usage_daily AS d (project_id, day, shard, team_id, input_tokens, output_tokens, llm_calls,
                                      heuristic_calls)
    VALUES (NEW.project_id, (coalesce(NEW.updated_at, now()) AT TIME ZONE 'UTC')::date,
            hashtext(NEW.id::text) & 15, NEW.team_id,
            CASE WHEN heuristic THEN 0 ELSE llm_usage_tokens(NEW.usage, 'input_tokens') END,
            CASE WHEN heuristic THEN 0 ELSE llm_usage_tokens(NEW.usage, 'output_tokens') END,
            CASE WHEN heuristic THEN 0 ELSE 1 END,
            CASE WHEN heuristic THEN 1 ELSE 0 END)
    ON CONFLICT (project_id, day, shard) DO UPDATE SET
        input_tokens = d.input_tokens + EXCLUDED.input_tokens,
        output_tokens = d.output_tokens + EXCLUDED.output_tokens,
        llm_calls = d.llm_calls + EXCLUDED.llm_calls,
        heuristic_calls = d.heuristic_calls + EXCLUDED.heuristic_calls,
        updated_at = now();
    RETURN NULL;
END $$;

-- Each project's budgets and what it and its team used today (UTC), summed
-- over the day's shards.
CREATE OR REPLACE VIEW llm_budget_today AS
SELECT p.id AS project_id,
       p.team_id,
       p.llm_daily_token_budget AS project_budget,
       coalesce(pu.tokens, 0)::bigint AS project_used,
       t.llm_daily_token_budget AS team_budget,
       coalesce(tu.tokens, 0)::bigint AS team_used
FROM projects p
JOIN teams t ON t.id = p.team_id
LEFT JOIN LATERAL (
    SELECT sum(u.input_tokens + u.output_tokens) AS tokens FROM llm_usage_daily u
    WHERE u.project_id = p.id AND u.day = (now() AT TIME ZONE 'UTC')::date
) pu ON true
LEFT JOIN LATERAL (
    SELECT sum(u.input_tokens + u.output_tokens) AS tokens FROM llm_usage_daily u
    WHERE u.team_id = p.team_id AND u.day = (now() AT TIME ZONE 'UTC')::date
) tu ON true;
