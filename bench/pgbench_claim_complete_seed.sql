-- pgbench_claim_complete_seed.sql: the due jobs pgbench_claim_complete.sql
-- works through, seeded like cairn_testkit::seed_jobs (one session, one due
-- sealed observation job per turn) but without the agent_events rows: claim
-- and complete never read them.
--
-- Run by bench/generator.sh with psql on a database that
-- `generator_throughput --prepare-pgbench-db` migrated and bootstrapped:
--   psql -v ON_ERROR_STOP=1 -v team_id=<uuid> -v project_id=<uuid> -v rows=200000 \
--     -f bench/pgbench_claim_complete_seed.sql <url>
--
-- 200k rows: a 15 s run must never drain the queue (an empty claim has no
-- row for \gset and stops the client).
--
-- next_attempt_at is spread 1 ms apart, oldest first, as jobs made due one
-- at a time by the ingest path are. With one shared timestamp (what a single
-- INSERT … SELECT gives, seed_jobs included) the claim's ORDER BY
-- next_attempt_at, id is not served by generation_jobs_runnable_idx
-- (next_attempt_at only): every claim sorts the whole tie (≈160 ms at 200k).

INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, prompt_counter)
VALUES (gen_random_uuid(), :'team_id', :'project_id', 'claude-code', 'pgbench-seed', :rows)
RETURNING id AS session_id \gset

INSERT INTO generation_jobs (id, team_id, project_id, session_id, job_type, source_type,
                             prompt_number, sealed, event_count, idempotency_key, next_attempt_at)
SELECT gen_random_uuid(), :'team_id', :'project_id', :'session_id', 'observations', 'agent_event', g, true, 1,
       'seed:' || :'session_id' || ':' || g, now() - (:rows - g) * interval '1 millisecond'
FROM generate_series(1, :rows) g;

VACUUM ANALYZE generation_jobs;
