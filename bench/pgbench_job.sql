-- Written by `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copy`
-- from crates/core/src/generation/job/write.rs. Do not edit.
--
-- One pgbench transaction is one job's claim and completion as the
-- generator sends them: the claim of bench/pgbench_claim_complete.sql,
-- then the one completion statement (the Complete transition, one
-- observation like the heuristic's for one Edit, no vectors, the
-- session mark). Run it on the database bench/generator.sh seeds:
--   pgbench -n -M prepared -c 8 -j 2 -T 10 -f bench/pgbench_job.sql <url>

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
                 locked_by = NULL, lease_expires_at = NULL, usage = coalesce('{"model":"heuristic-v1","provider":"heuristic"}'::jsonb, j.usage), updated_at = now()
             FROM (SELECT id, status AS from_status FROM generation_jobs
                   WHERE id = :id AND project_id = :project_id AND status = ANY('{processing}'::text[])
                     AND (('pgbench:' || :client_id::text)::text IS NULL OR locked_by = ('pgbench:' || :client_id::text)) FOR UPDATE) prev
             WHERE j.id = prev.id
             RETURNING j.id, j.team_id, j.project_id, j.session_id, j.prompt_number, prev.from_status, j.status
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
             SELECT id, team_id, project_id, from_status, status, ('pgbench:' || :client_id::text), '{}'::jsonb FROM moved
         )
    , observations_written AS (
        INSERT INTO observations (id, team_id, project_id, session_id, job_id, generation_key, origin, kind,
            title, subtitle, facts, narrative, concepts, files_read, files_modified, metadata, provider, model,
            prompt_number, commit_sha, file_refs)
        SELECT o.id, m.team_id, m.project_id, m.session_id, m.id, o.generation_key, 'generated', o.kind,
            o.title, o.subtitle, o.facts, o.narrative, o.concepts, o.files_read, o.files_modified, o.metadata,
            o.provider, o.model, m.prompt_number,
            (SELECT s.head_commit FROM sessions s WHERE s.id = m.session_id AND s.project_id = m.project_id),
            coalesce((SELECT jsonb_agg(jsonb_build_object('path', v.path, 'hash', v.hash)
                                       || CASE WHEN o.lines ? v.path THEN jsonb_build_object('lines', o.lines -> v.path)
                                               ELSE '{}' END
                                       ORDER BY v.path)
                      FROM (SELECT DISTINCT ON (fv.path) fv.path, fv.hash
                            FROM unnest(o.files_read || o.files_modified) f, sessions s, file_versions fv
                            WHERE s.id = m.session_id AND s.project_id = m.project_id
                              AND fv.project_id = m.project_id
                              AND fv.path IN (f, CASE WHEN f LIKE s.cwd || '/%' THEN substr(f, length(s.cwd) + 2) END)
                            ORDER BY fv.path, fv.seen_at DESC) v), '[]'::jsonb)
        FROM moved m, jsonb_to_recordset(jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'generation_key', 'pgbench:' || gen_random_uuid(), 'kind', 'change', 'title', 'Edited src/lib.rs', 'subtitle', 'replaced 2 lines', 'facts', '["src/lib.rs: fn parse now returns Result"]'::jsonb, 'narrative', 'Edited src/lib.rs: parse returns a Result instead of panicking.', 'concepts', '["what-changed"]'::jsonb, 'files_read', '[]'::jsonb, 'files_modified', '["src/lib.rs"]'::jsonb, 'metadata', '{"heuristic": true}'::jsonb, 'provider', 'heuristic', 'model', 'heuristic-v1'))) AS o(id uuid, generation_key text, kind text, title text,
            subtitle text, facts text[], narrative text, concepts text[], files_read text[],
            files_modified text[], metadata jsonb, provider text, model text, lines jsonb)
        RETURNING id, project_id, session_id, kind, files_modified, file_refs, visibility, member_id
    ), changed_files AS MATERIALIZED (
        SELECT w.id, w.project_id, w.kind, w.visibility, w.member_id,
            (SELECT jsonb_object_agg(r ->> 'path', r -> 'hash') FROM jsonb_array_elements(w.file_refs) r
             WHERE r ? 'hash') AS fresh,
            w.files_modified || ARRAY(
                SELECT p FROM (
                    SELECT CASE WHEN f LIKE s.cwd || '/%' THEN substr(f, length(s.cwd) + 2)
                                WHEN f NOT LIKE '/%' THEN s.cwd || '/' || f END AS p
                    FROM unnest(w.files_modified) f, sessions s
                    WHERE s.id = w.session_id AND s.project_id = w.project_id AND coalesce(s.cwd, '') <> '') x
                WHERE p IS NOT NULL) AS paths
        FROM observations_written w WHERE cardinality(w.files_modified) > 0

    ), code_locked AS (
        SELECT o.id, c.id AS new_id, c.paths,
            o.kind = c.kind AND o.files_modified && c.paths
              AND (c.visibility = 'team' OR (o.visibility = 'private' AND o.member_id = c.member_id)) AS replaced,
            file_refs_after_edits(o.file_refs, o.files_read || o.files_modified, c.paths, '{}'::jsonb, c.fresh) AS retied
        FROM observations o, changed_files c
        WHERE o.project_id = c.project_id AND o.state = 'live' AND o.kind <> 'plan'
          AND (o.files_read || o.files_modified) && c.paths
        FOR UPDATE OF o SKIP LOCKED
    ), code_retied AS (
        UPDATE observations o SET file_refs = c.retied, updated_at = now()
        FROM code_locked c
        WHERE o.id = c.id AND o.state = 'live' AND c.retied IS NOT NULL
    ), code_changed AS (
        UPDATE observations o SET
            state = CASE WHEN c.replaced THEN 'superseded' ELSE 'stale' END,
            replaced_by = CASE WHEN c.replaced THEN c.new_id END,
            state_changed_at = now(), updated_at = now()
        FROM code_locked c
        WHERE o.id = c.id AND o.state = 'live' AND c.retied IS NULL
        RETURNING o.id, o.team_id, o.project_id, o.state, o.replaced_by
    ), code_changes_logged AS (
        INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
            related_id, reason, actor)
        SELECT gen_random_uuid(), c.team_id, c.project_id, c.id,
            CASE c.state WHEN 'superseded' THEN 'supersede' ELSE 'stale' END, 'live', c.state, c.replaced_by,
            'a later turn changed its files', 'generator'
        FROM code_changed c

    ), summaries_written AS (
        INSERT INTO summaries (id, team_id, project_id, session_id, job_id, generation_key, scope, prompt_number,
            request, investigated, learned, completed, next_steps, notes, provider, model)
        SELECT s.id, m.team_id, m.project_id, m.session_id, m.id, s.generation_key, s.scope, m.prompt_number,
            s.request, s.investigated, s.learned, s.completed, s.next_steps, s.notes, s.provider, s.model
        FROM moved m, jsonb_to_recordset('[]'::jsonb) AS s(id uuid, generation_key text, scope text, request text,
            investigated text, learned text, completed text, next_steps text, notes text, provider text,
            model text)
    ), observation_vectors AS (
        INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding, reading)
        SELECT v.id, m.project_id, v.model, cardinality(v.embedding), v.embedding, v.reading
        FROM moved m, jsonb_to_recordset('[]'::jsonb) AS v(id uuid, model text, reading smallint, embedding real[])
    ), summary_vectors AS (
        INSERT INTO summary_embeddings (summary_id, project_id, model, dims, embedding, reading)
        SELECT v.id, m.project_id, v.model, cardinality(v.embedding), v.embedding, v.reading
        FROM moved m, jsonb_to_recordset('[]'::jsonb) AS v(id uuid, model text, reading smallint, embedding real[])
    ), session_marked AS (
        UPDATE sessions s SET last_generated_at = now()
        WHERE s.id = (SELECT x.id FROM sessions x, moved m
                      WHERE x.id = m.session_id AND x.project_id = m.project_id
                        AND (x.last_generated_at IS NULL OR x.last_generated_at < now() - interval '1 second')
                      FOR UPDATE OF x SKIP LOCKED)
    )
         SELECT status FROM moved;
