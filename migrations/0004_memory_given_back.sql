-- Memory given back: per-project context settings, and the indexes behind
-- search filters, file lookups and timelines; and the claim order index.

ALTER TABLE projects
    -- The SessionStart context is fitted to this many tokens.
    ADD COLUMN context_budget_tokens integer NOT NULL DEFAULT 2000
        CHECK (context_budget_tokens BETWEEN 200 AND 50000),
    -- Opt-in: UserPromptSubmit answers with the memories most related to the prompt.
    ADD COLUMN prompt_context boolean NOT NULL DEFAULT false,
    ADD COLUMN prompt_context_budget_tokens integer NOT NULL DEFAULT 300
        CHECK (prompt_context_budget_tokens BETWEEN 50 AND 5000);

-- Search by file (read or modified) and by concept.
CREATE INDEX observations_files_idx ON observations USING gin ((files_read || files_modified));
CREATE INDEX observations_concepts_idx ON observations USING gin (concepts);
-- Filters by type and session, newest first (timelines walk observations_recent_idx).
CREATE INDEX observations_kind_idx ON observations (project_id, kind, created_at DESC);
CREATE INDEX observations_session_idx ON observations (session_id, created_at DESC) WHERE session_id IS NOT NULL;

-- The claim takes due jobs in (next_attempt_at, id) order: index both, so jobs
-- made due by one statement (same next_attempt_at) are still claimed by an
-- index scan rather than a sort of the whole backlog.
DROP INDEX generation_jobs_runnable_idx;
CREATE INDEX generation_jobs_runnable_idx ON generation_jobs (next_attempt_at, id) WHERE status = 'queued';
