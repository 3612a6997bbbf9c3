-- Daily LLM token budgets per project (and per team), and the usage they are
-- measured against. Idempotent: every statement may run again.
--
-- A budget is a number of tokens (input, cached ones included, plus output)
-- per UTC day; NULL means unlimited. The generator reads `llm_budget_today`
-- before it calls a provider: past 80 % of either budget it degrades, at
-- 100 % it answers with the offline heuristic (see services/generator/src/budget.rs).

ALTER TABLE projects ADD COLUMN IF NOT EXISTS llm_daily_token_budget bigint
    CHECK (llm_daily_token_budget > 0);
ALTER TABLE teams ADD COLUMN IF NOT EXISTS llm_daily_token_budget bigint
    CHECK (llm_daily_token_budget > 0);

-- What the budget decided for the job's latest attempt (NULL: no budget applied).
ALTER TABLE generation_jobs ADD COLUMN IF NOT EXISTS budget_state text
    CHECK (budget_state IN ('ok', 'degraded', 'exhausted'));
-- {"action": "provider" | "heuristic", "reason", "projectBudget", "projectUsed", "teamBudget", "teamUsed"}.
ALTER TABLE generation_jobs ADD COLUMN IF NOT EXISTS budget_detail jsonb;

-- Tokens per project per UTC day. One row per (project, day), so "used today"
-- is a primary-key lookup (a team's, an index range over its projects).
CREATE TABLE IF NOT EXISTS llm_usage_daily (
    project_id       uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day              date NOT NULL,
    team_id          uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    -- Model tokens only: the heuristic spends none.
    input_tokens     bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens    bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    llm_calls        bigint NOT NULL DEFAULT 0 CHECK (llm_calls >= 0),
    heuristic_calls  bigint NOT NULL DEFAULT 0 CHECK (heuristic_calls >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, day)
);
CREATE INDEX IF NOT EXISTS llm_usage_daily_team_idx ON llm_usage_daily (team_id, day);

-- A non-negative whole number of tokens from a usage object; 0 for anything
-- else, so a malformed usage never fails a completion.
CREATE OR REPLACE FUNCTION llm_usage_tokens(u jsonb, k text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(u -> k) = 'number'
                THEN least(greatest(floor((u ->> k)::numeric), 0), 1000000000000000)::bigint
                ELSE 0 END
$$;

-- Counts a job's usage when the state machine records it (complete, retry
-- later, fail: each attempt the provider answered writes a new usage object).
-- Deferred to commit, so the (project, day) row is locked only while the
-- completion transaction commits, not while it writes its rows.
CREATE OR REPLACE FUNCTION llm_usage_daily_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    heuristic boolean := coalesce(NEW.usage ->> 'provider', '') = 'heuristic';
BEGIN
    IF jsonb_typeof(NEW.usage) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    INSERT INTO llm_usage_daily AS d (project_id, day, team_id, input_tokens, output_tokens, llm_calls,
                                      heuristic_calls)
    VALUES (NEW.project_id, (coalesce(NEW.updated_at, now()) AT TIME ZONE 'UTC')::date, NEW.team_id,
            CASE WHEN heuristic THEN 0 ELSE llm_usage_tokens(NEW.usage, 'input_tokens') END,
            CASE WHEN heuristic THEN 0 ELSE llm_usage_tokens(NEW.usage, 'output_tokens') END,
            CASE WHEN heuristic THEN 0 ELSE 1 END,
            CASE WHEN heuristic THEN 1 ELSE 0 END)
    ON CONFLICT (project_id, day) DO UPDATE SET
        input_tokens = d.input_tokens + EXCLUDED.input_tokens,
        output_tokens = d.output_tokens + EXCLUDED.output_tokens,
        llm_calls = d.llm_calls + EXCLUDED.llm_calls,
        heuristic_calls = d.heuristic_calls + EXCLUDED.heuristic_calls,
        updated_at = now();
    RETURN NULL;
END $$;

-- Jobs that already hold a usage when this runs: their last attempt's, by the
-- day they last changed (earlier attempts were overwritten and are not known).
INSERT INTO llm_usage_daily (project_id, day, team_id, input_tokens, output_tokens, llm_calls, heuristic_calls)
SELECT project_id, (updated_at AT TIME ZONE 'UTC')::date, team_id,
       sum(CASE WHEN usage ->> 'provider' = 'heuristic' THEN 0 ELSE llm_usage_tokens(usage, 'input_tokens') END),
       sum(CASE WHEN usage ->> 'provider' = 'heuristic' THEN 0 ELSE llm_usage_tokens(usage, 'output_tokens') END),
       count(*) FILTER (WHERE coalesce(usage ->> 'provider', '') <> 'heuristic'),
       count(*) FILTER (WHERE usage ->> 'provider' = 'heuristic')
FROM generation_jobs
WHERE jsonb_typeof(usage) = 'object'
GROUP BY project_id, (updated_at AT TIME ZONE 'UTC')::date, team_id
ON CONFLICT (project_id, day) DO NOTHING;

DROP TRIGGER IF EXISTS generation_jobs_usage_insert_trg ON generation_jobs;
CREATE CONSTRAINT TRIGGER generation_jobs_usage_insert_trg
    AFTER INSERT ON generation_jobs DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.usage IS NOT NULL)
    EXECUTE FUNCTION llm_usage_daily_count();
DROP TRIGGER IF EXISTS generation_jobs_usage_update_trg ON generation_jobs;
CREATE CONSTRAINT TRIGGER generation_jobs_usage_update_trg
    AFTER UPDATE OF usage ON generation_jobs DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.usage IS NOT NULL AND NEW.usage IS DISTINCT FROM OLD.usage)
    EXECUTE FUNCTION llm_usage_daily_count();

-- Each project's budgets and what it and its team used today (UTC). Filter
-- by project_id: the usage lookups run for the matching rows only.
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
    SELECT u.input_tokens + u.output_tokens AS tokens FROM llm_usage_daily u
    WHERE u.project_id = p.id AND u.day = (now() AT TIME ZONE 'UTC')::date
) pu ON true
LEFT JOIN LATERAL (
    SELECT sum(u.input_tokens + u.output_tokens) AS tokens FROM llm_usage_daily u
    WHERE u.team_id = p.team_id AND u.day = (now() AT TIME ZONE 'UTC')::date
) tu ON true;
