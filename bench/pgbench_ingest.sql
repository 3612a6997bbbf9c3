-- pgbench_ingest.sql: the database floor under Cairn's ingest path.
--
-- One transaction per stored event, against the real Cairn tables of the
-- cairn_bench database: insert one generation_jobs (outbox) row, then one
-- agent_events row with a ~2 KB JSONB payload that points at it, with its
-- idempotency key row (agent_event_keys, migration 0029). No HTTP,
-- no auth, no JSON parsing, no session upsert, no Redis: what is left is
-- what Postgres itself costs for the two rows, which bounds what the API
-- could ever reach on the same machine.
--
-- Run by bench/ingest.sh as:
--   pgbench -n -M prepared -f bench/pgbench_ingest.sql -c 8 -j 2 -T 20 \
--     -D team_id=<uuid> -D project_id=<uuid> -D run=c8 -D n=0 \
--     -D payload='<json text>' cairn_bench
--
-- -M prepared is required: variables become bound parameters, which is what
-- lets :payload carry arbitrary JSON text without quoting.
--
-- Idempotency keys: pgbench variables are per client and survive between
-- transactions, so :n (started at 0 with -D n=0) is a per-client counter and
-- 'pgb:' || run || ':' || client_id || ':' || n is unique without the
-- birthday collisions a random number would risk over ~10^5 transactions.

\set n :n + 1
BEGIN;
INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, event_count,
                             idempotency_key)
VALUES (gen_random_uuid(), :team_id, :project_id, 'observations', 'agent_event', 1,
        'pgb-job:' || :run::text || ':' || :client_id::text || ':' || :n::text)
RETURNING id AS job_id \gset
WITH k AS (
    INSERT INTO agent_event_keys (project_id, idempotency_key, event_id, received_at)
    VALUES (:project_id, 'pgb:' || :run::text || ':' || :client_id::text || ':' || :n::text, gen_random_uuid(), now())
    RETURNING idempotency_key, event_id
)
INSERT INTO agent_events (id, team_id, project_id, job_id, source_adapter, source_type, event_type,
                          platform_source, source_event_id, idempotency_key, prompt_number,
                          tool_name, payload, metadata, occurred_at)
SELECT k.event_id, :team_id, :project_id, :job_id, 'claude-code', 'hook', 'PostToolUse',
       'claude-code', 'toolu_pgb', k.idempotency_key, 0, 'Read', :payload::jsonb, '{}'::jsonb, now()
  FROM k;
COMMIT;
