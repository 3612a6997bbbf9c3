-- Group commit for the commonest event (a tool call of a known session's
-- open turn): one call stores a batch of such events, each exactly as the
-- one-statement path stored it alone, in array order, in one round trip and
-- one commit (ingest/group_commit.rs, store/turn_events.rs).
--
-- For each event i: the session is read; the event's key is claimed in
-- `agent_event_keys` (nothing else is written for a duplicate, nor for a
-- private turn); the turn's observation job is joined (or created) with the
-- same upsert as the transaction path, sealed at `p_max_turn_events`; the
-- event is inserted naming that job. One row per event comes back, in order:
-- `sess` is NULL when the project has no such session (the caller takes the
-- transaction path, which creates it), `event_id` is NULL for a duplicate or
-- a private turn, `job` is the job the event joined.

CREATE OR REPLACE FUNCTION cairn_store_turn_events(
    p_max_turn_events integer, p_turn_idle interval,
    p_ids uuid[], p_team_ids uuid[], p_project_ids uuid[], p_agents text[], p_sessions text[],
    p_job_ids uuid[], p_source_adapters text[], p_source_types text[], p_event_types text[],
    p_platform_sources text[], p_source_event_ids text[], p_key_per_turn boolean[], p_keys text[],
    p_tool_names text[], p_payloads jsonb[], p_metadata jsonb[], p_occurred_at timestamptz[],
    p_member_ids uuid[], p_generate boolean[], p_seal_now boolean[], p_traceparents text[])
RETURNS TABLE (ord integer, sess sessions, event_id uuid, event_received_at timestamptz,
               event_created_at timestamptz, event_key text, job generation_jobs)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    i integer;
    r record;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        ord := i;
        WITH s AS (
            SELECT x FROM sessions x
             WHERE x.project_id = p_project_ids[i] AND x.agent = p_agents[i]
               AND x.external_session_id = p_sessions[i]
        ),
        k AS (
            INSERT INTO agent_event_keys AS ek (project_id, idempotency_key, event_id, received_at)
            SELECT p_project_ids[i],
                   CASE WHEN p_key_per_turn[i] THEN p_keys[i] || ':turn' || (s.x).prompt_counter ELSE p_keys[i] END,
                   p_ids[i], now()
              FROM s
             WHERE (s.x).private_prompt_number IS DISTINCT FROM (s.x).prompt_counter
            ON CONFLICT (project_id, idempotency_key) DO NOTHING
            RETURNING ek.idempotency_key
        ),
        j AS (
            INSERT INTO generation_jobs AS gj (id, team_id, project_id, session_id, agent_event_id, job_type,
                source_type, prompt_number, event_count, sealed, next_attempt_at, idempotency_key, traceparent)
            SELECT p_job_ids[i], p_team_ids[i], p_project_ids[i], (s.x).id, p_ids[i], 'observations',
                   'agent_event', (s.x).prompt_counter, 1, p_seal_now[i] OR 1 >= p_max_turn_events,
                   CASE WHEN p_seal_now[i] OR 1 >= p_max_turn_events THEN now() ELSE now() + p_turn_idle END,
                   'observations:' || (s.x).id || ':' || (s.x).prompt_counter || ':' || p_job_ids[i],
                   p_traceparents[i]
              FROM s, k
             WHERE p_generate[i]
            ON CONFLICT (session_id, prompt_number)
                WHERE status = 'queued' AND job_type = 'observations' AND NOT sealed
            DO UPDATE SET
                event_count = gj.event_count + 1,
                sealed = p_seal_now[i] OR gj.event_count + 1 >= p_max_turn_events,
                next_attempt_at = CASE WHEN p_seal_now[i] OR gj.event_count + 1 >= p_max_turn_events
                                       THEN now() ELSE now() + p_turn_idle END,
                traceparent = coalesce(gj.traceparent, EXCLUDED.traceparent),
                updated_at = now()
            RETURNING gj
        ),
        e AS (
            INSERT INTO agent_events AS ae (id, team_id, project_id, session_id, job_id, source_adapter,
                source_type, event_type, platform_source, source_event_id, idempotency_key, prompt_number,
                tool_name, payload, metadata, occurred_at, member_id)
            SELECT p_ids[i], p_team_ids[i], p_project_ids[i], (s.x).id, (j.gj).id, p_source_adapters[i],
                   p_source_types[i], p_event_types[i], p_platform_sources[i], p_source_event_ids[i],
                   k.idempotency_key, (s.x).prompt_counter, p_tool_names[i], p_payloads[i], p_metadata[i],
                   p_occurred_at[i], p_member_ids[i]
              FROM s CROSS JOIN k LEFT JOIN j ON true
            RETURNING ae.id, ae.received_at, ae.created_at
        )
        SELECT s.x AS sess, e.id AS event_id, e.received_at, e.created_at,
               CASE WHEN p_key_per_turn[i] THEN p_keys[i] || ':turn' || (s.x).prompt_counter ELSE p_keys[i] END AS event_key,
               j.gj AS job
          INTO r
          FROM (SELECT 1) one LEFT JOIN s ON true LEFT JOIN e ON true LEFT JOIN j ON true;
        sess := r.sess;
        event_id := r.event_id;
        event_received_at := r.received_at;
        event_created_at := r.created_at;
        event_key := r.event_key;
        job := r.job;
        RETURN NEXT;
    END LOOP;
END
$$;
