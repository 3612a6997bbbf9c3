-- Defaults of memory given back, for new projects (projects keep whatever
-- they have set): a prompt's related memories get up to 500 tokens (was
-- 300; with excerpts focused on the prompt the room now holds the fact a
-- question asks for more often), and SessionStart 1,500 (was 2,000), so a
-- session's first prompt and its start stay within 2,000 tokens together
-- (bench/README.md, "What the offline generator keeps, and what a prompt
-- is shown").
ALTER TABLE projects ALTER COLUMN prompt_context_budget_tokens SET DEFAULT 500;
ALTER TABLE projects ALTER COLUMN context_budget_tokens SET DEFAULT 1500;
