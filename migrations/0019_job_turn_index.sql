-- A turn's jobs, looked up by session and prompt number: the load of an
-- observation job (does the turn's summary fall to it, is it the turn's
-- last), a turn or session summary waiting for its turn's jobs, and the
-- idle-session sweep. Without it each of those read every job of every
-- project.
CREATE INDEX IF NOT EXISTS generation_jobs_turn_idx ON generation_jobs (session_id, prompt_number);
