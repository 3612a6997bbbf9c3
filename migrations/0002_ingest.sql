-- Sessions and agent events: what the API stores on ingest.

CREATE TABLE sessions (
    id                    uuid PRIMARY KEY,
    team_id               uuid NOT NULL,
    project_id            uuid NOT NULL,
    -- Which agent (claude-code, cursor, ...) and that agent's own session id.
    agent                 text NOT NULL,
    external_session_id   text NOT NULL CHECK (length(external_session_id) BETWEEN 1 AND 256),
    content_session_id    text,
    agent_id              text,
    agent_type            text,
    platform_source       text,
    cwd                   text,
    status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
    generation_status     text NOT NULL DEFAULT 'idle',
    -- Raised by each user prompt; events carry the prompt number of their turn.
    prompt_counter        integer NOT NULL DEFAULT 0 CHECK (prompt_counter >= 0),
    -- The turn whose prompt was entirely private: nothing of it is stored.
    private_prompt_number integer,
    last_prompt_hash      text,
    metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
    started_at            timestamptz NOT NULL DEFAULT now(),
    ended_at              timestamptz,
    last_generated_at     timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    UNIQUE (project_id, agent, external_session_id),
    UNIQUE (project_id, id)
);
CREATE INDEX sessions_content_idx ON sessions (project_id, content_session_id);
CREATE INDEX sessions_recent_idx ON sessions (project_id, updated_at DESC);

CREATE TABLE agent_events (
    id                uuid PRIMARY KEY,
    team_id           uuid NOT NULL,
    project_id        uuid NOT NULL,
    session_id        uuid,
    -- The generation job this event feeds (set in the ingest transaction).
    job_id            uuid,
    source_adapter    text NOT NULL,
    source_type       text NOT NULL CHECK (source_type IN ('hook', 'worker', 'provider', 'server', 'api')),
    event_type        text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 100),
    platform_source   text,
    source_event_id   text,
    idempotency_key   text NOT NULL,
    prompt_number     integer,
    tool_name         text,
    payload           jsonb NOT NULL DEFAULT '{}'::jsonb,
    metadata          jsonb NOT NULL DEFAULT '{}'::jsonb,
    occurred_at       timestamptz NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now(),
    created_at        timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, session_id) REFERENCES sessions (project_id, id) ON DELETE CASCADE,
    UNIQUE (project_id, idempotency_key),
    UNIQUE (project_id, id)
);
CREATE INDEX agent_events_turn_idx ON agent_events (session_id, prompt_number, occurred_at);
CREATE INDEX agent_events_job_idx ON agent_events (job_id) WHERE job_id IS NOT NULL;
