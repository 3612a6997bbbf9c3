-- The dashboard's reads: a project's sessions newest first (keyset pages),
-- the last hour's completions and the last day's failed attempts (the
-- queue view), each found by an index rather than by reading every job.

CREATE INDEX IF NOT EXISTS sessions_started_idx ON sessions (project_id, started_at DESC, id DESC);

CREATE INDEX IF NOT EXISTS generation_jobs_completed_idx ON generation_jobs (completed_at)
    WHERE status = 'completed';

-- A failed attempt: the generator's error (`<class>: …`), a rescue after
-- an expired lease, or the sweeper's exhausted attempts.
CREATE INDEX IF NOT EXISTS generation_job_events_failures_idx ON generation_job_events (created_at)
    WHERE detail ? 'error' OR detail->>'reason' IN ('lease expired', 'attempts exhausted');
