-- pgbench_claim_complete.sql: the database floor under one generator job.
--
-- One pgbench transaction is one job's two state-machine statements, as
-- crates/shared/src/jobs/state_machine.rs issues them (its test
-- the_pgbench_copy_of_the_claim_is_current checks the claim below):
--   1. claim (ClaimTarget::AnyDue(1)): the claim CTE with LIMIT 1, worker
--      'pgbench:<client_id>', a 60 s lease; its row goes to variables (\gset);
--   2. apply(Transition::Complete): the conditional UPDATE guarded by
--      locked_by plus the generation_job_events INSERT, for the claimed job.
-- Each is its own autocommit statement. Left out, compared with the
-- generator: loading the job's material (3 queries), the provider, parsing,
-- the BEGIN/COMMIT around the completion with its observation INSERT and
-- sessions UPDATE, and the Redis live notice. So transactions/s here is an
-- upper bound on jobs/s for the state-machine SQL alone.
--
-- Where $n parameters of the Rust code are not variables here, they are
-- written as literals with the value the generator binds: $3 (only this job)
-- is NULL, $4 (from) is {processing}, $5/$6 are NULL for Complete, $7 is a
-- heuristic usage object and $9 (detail) is {}.
--
-- Run by bench/generator.sh on a database seeded by
-- pgbench_claim_complete_seed.sql (enough rows that the queue never drains:
-- an empty claim gives \gset no row and aborts the client):
--   pgbench -n -M prepared -c 8 -j 2 -T 15 -f bench/pgbench_claim_complete.sql <url>

WITH next AS (
    SELECT g.id FROM generation_jobs g
    WHERE g.status = 'queued' AND g.next_attempt_at <= now() AND g.attempts < g.max_attempts
      AND (NULL::uuid IS NULL OR g.id = NULL::uuid) AND (NULL::uuid IS NULL OR g.project_id = NULL::uuid)
      AND NOT (g.job_type = 'turn_summary' AND EXISTS (
          SELECT 1 FROM generation_jobs o
          WHERE o.session_id = g.session_id AND o.prompt_number = g.prompt_number
            AND o.job_type = 'observations' AND o.status = 'queued'
            AND o.next_attempt_at <= now() AND o.attempts < o.max_attempts))
      AND NOT (g.job_type = 'session_summary' AND EXISTS (
          SELECT 1 FROM generation_jobs t
          WHERE t.session_id = g.session_id AND t.job_type IN ('observations', 'turn_summary')
            AND t.status = 'queued' AND t.next_attempt_at <= now() AND t.attempts < t.max_attempts))
    ORDER BY g.next_attempt_at, g.id
    LIMIT 1 FOR UPDATE OF g SKIP LOCKED
), moved AS (
    UPDATE generation_jobs j SET status = 'processing', attempts = j.attempts + 1, sealed = true,
        locked_by = 'pgbench:' || :client_id::text, lease_expires_at = now() + interval '60 seconds',
        started_at = coalesce(j.started_at, now()), updated_at = now()
    FROM next WHERE j.id = next.id
    RETURNING j.id, j.team_id, j.project_id, j.session_id, j.job_type, j.prompt_number, j.attempts,
        j.max_attempts, j.lease_expires_at, j.traceparent
), logged AS (
    INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
    SELECT id, team_id, project_id, 'queued', 'processing', 'pgbench:' || :client_id::text,
        jsonb_build_object('attempt', attempts)
    FROM moved
)
SELECT * FROM moved \gset

WITH moved AS (
    UPDATE generation_jobs j SET status = 'completed', completed_at = now(), last_error = NULL,
        locked_by = NULL, lease_expires_at = NULL,
        usage = coalesce('{"provider": "heuristic", "model": "heuristic-v1", "input_tokens": 120, "output_tokens": 90, "cached_tokens": 0, "cache_creation_tokens": 0, "latency_ms": 0}'::jsonb, j.usage),
        updated_at = now()
    FROM (SELECT id, status AS from_status FROM generation_jobs
          WHERE id = :id AND project_id = :project_id AND status = ANY('{processing}'::text[])
            AND ('pgbench:' || :client_id::text IS NULL OR locked_by = 'pgbench:' || :client_id::text)
          FOR UPDATE) prev
    WHERE j.id = prev.id
    RETURNING j.id, j.team_id, j.project_id, prev.from_status, j.status
), logged AS (
    INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
    SELECT id, team_id, project_id, from_status, status, 'pgbench:' || :client_id::text, '{}'::jsonb
    FROM moved
)
SELECT status FROM moved;
