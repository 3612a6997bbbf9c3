-- bench/explain.sql: EXPLAIN (ANALYZE, BUFFERS) of the statements behind the
-- SessionStart context and search, as cairn-api runs them: the same SQL,
-- prepared with the same parameter types as sqlx binds them, then executed.
-- Run by bench/memory.sh on the memory_latency database, after the load.
-- Needs psql variables (memory_latency --psql-vars writes them):
--   project_a, project_small   the 100k-observation project and an ~18k one
--   q1_max, q1_median          1-word queries: most matches, median matches
--   q2_max, q4_max             2- and 4-word queries with the most matches
--   prompt_or                  an OR query as gather::any_word_query makes it
-- Each plan follows a line `== <label>`; memory.sh summarises them.
-- The search statement comes from search_hits.sql, written from the code; the
-- others are copied from services/api/src/context/gather.rs and
-- store/observations.rs: keep them in step when those change.

\set ON_ERROR_STOP 1
SET track_io_timing = on;

-- ------------------------------------------------------------ context (gather.rs)

PREPARE context_settings(uuid) AS
SELECT name, context_budget_tokens, prompt_context, prompt_context_budget_tokens
FROM projects WHERE id = $1;

PREPARE context_summaries(uuid, int8) AS
SELECT id, session_id, scope, request, learned, completed, next_steps, created_at
FROM summaries WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2;

PREPARE context_recent(uuid, int8) AS
SELECT id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at
FROM observations WHERE project_id = $1
ORDER BY created_at DESC, id DESC LIMIT $2;

PREPARE context_count(uuid, int8) AS
SELECT count(*) FROM (SELECT 1 FROM observations WHERE project_id = $1 LIMIT $2) capped;

PREPARE context_matching(uuid, text, int8, int8) AS
SELECT id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at FROM (
    SELECT id, kind, title, subtitle, facts, narrative, files_read, files_modified, created_at, search
    FROM observations
    WHERE project_id = $1 AND search @@ to_tsquery('english', $2)
    ORDER BY created_at DESC LIMIT $4) newest_matches
ORDER BY ts_rank(search, to_tsquery('english', $2)) DESC, created_at DESC LIMIT $3;

\echo '== context: settings'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE context_settings(:'project_a');
\echo '== context: newest 8 summaries'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE context_summaries(:'project_a', 8);
\echo '== context: newest 80 observations'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE context_recent(:'project_a', 80);
\echo '== context: count capped at 1000'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE context_count(:'project_a', 1000);
\echo '== context with a query (POST /v1/context, UserPromptSubmit): OR of 6 words'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE context_matching(:'project_a', :'prompt_or', 3, 1000);

-- ------------------------------------------------------------ search (search/sql.rs, Order::Relevance)
-- The statement for a query and no filter, summaries included (Shape { query,
-- summaries }), written from the code into search_hits.sql by a test of
-- search/sql.rs. All 16 parameters are bound, as sqlx binds them: $1 project,
-- $2 as_of, $3 query, $4 types, $5 concepts, $6 file, $7 file suffix
-- pattern, $8 session, $9 agent, $10 platform source, $11 since, $12 until,
-- $13 summaries (unused), $14 page + 1, $15 offset, $16 excluded words.

\ir search_hits.sql

-- GET /v1/search?projectId&query&limit=20: no filters, summaries included, 21 rows fetched.
\echo '== search 1 word, most matches:' :q1_max
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_a', NULL, :'q1_max', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);
\echo '== search 1 word, median matches:' :q1_median
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_a', NULL, :'q1_median', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);
\echo '== search 2 words, most matches:' :q2_max
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_a', NULL, :'q2_max', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);
\echo '== search 4 words, most matches:' :q4_max
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_a', NULL, :'q4_max', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);
\echo '== search 1 word on the ~18k project:' :q1_max
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_small', NULL, :'q1_max', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);
-- The 6th execution of the statement on this connection: from here Postgres
-- may switch to a generic plan (one plan for every word, costed without the
-- word), as it may on each API pool connection where sqlx keeps the
-- statement prepared. The most frequent word shows what that costs.
\echo '== search 1 word, most matches, 6th execution (plan cache):' :q1_max
EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_hits(:'project_a', NULL, :'q1_max', '{}', '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, 21, 0, NULL, NULL, NULL, false);

-- The page's rows, by id (store/observations.rs by_ids; search/sql.rs summaries_by_ids).
PREPARE load_observations(uuid, uuid[]) AS
SELECT o.id, o.team_id, o.project_id, o.session_id, o.origin, o.kind, o.title, o.subtitle, o.facts,
       o.narrative, o.concepts, o.files_read, o.files_modified, o.content, o.metadata, o.provider,
       o.model, o.prompt_number, o.created_at, o.updated_at
FROM unnest($2::uuid[]) WITH ORDINALITY AS asked(id, position)
JOIN observations o ON o.id = asked.id AND o.project_id = $1
ORDER BY asked.position;

PREPARE load_summaries(uuid, uuid[]) AS
SELECT id, session_id, scope, prompt_number, request, learned, completed, next_steps, created_at
FROM summaries WHERE project_id = $1 AND id = ANY($2);

SELECT coalesce(array_agg(id), '{}')::text AS page_ids
FROM (SELECT id FROM observations WHERE project_id = :'project_a'
      AND search @@ websearch_to_tsquery('english', :'q1_median') ORDER BY id LIMIT 20) page \gset
SELECT coalesce(array_agg(id), '{}')::text AS summary_ids
FROM (SELECT id FROM summaries WHERE project_id = :'project_a' ORDER BY id LIMIT 5) page \gset

\echo '== search: load 20 observations by id'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE load_observations(:'project_a', :'page_ids');
\echo '== search: load 5 summaries by id'
EXPLAIN (ANALYZE, BUFFERS) EXECUTE load_summaries(:'project_a', :'summary_ids');
