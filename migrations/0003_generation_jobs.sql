-- The generation-job outbox, its event log, and what the generator writes back.

CREATE TABLE generation_jobs (
    id                uuid PRIMARY KEY,
    team_id           uuid NOT NULL,
    project_id        uuid NOT NULL,
    session_id        uuid,
    -- The event that created the job (its first event for a coalesced turn).
    agent_event_id    uuid,
    job_type          text NOT NULL CHECK (job_type IN ('observations', 'turn_summary', 'session_summary')),
    source_type       text NOT NULL CHECK (source_type IN ('agent_event', 'session')),
    prompt_number     integer,
    status            text NOT NULL DEFAULT 'queued'
                      CHECK (status IN ('queued', 'processing', 'completed', 'failed', 'cancelled')),
    attempts          integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts      integer NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
    retried_count     integer NOT NULL DEFAULT 0 CHECK (retried_count >= 0),
    -- Coalescing: events joined so far; a sealed job takes no more events.
    event_count       integer NOT NULL DEFAULT 0 CHECK (event_count >= 0),
    sealed            boolean NOT NULL DEFAULT false,
    next_attempt_at   timestamptz NOT NULL DEFAULT now(),
    locked_by         text,
    lease_expires_at  timestamptz,
    last_error        text,
    idempotency_key   text NOT NULL,
    usage             jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    completed_at      timestamptz,
    failed_at         timestamptz,
    cancelled_at      timestamptz,
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, session_id) REFERENCES sessions (project_id, id) ON DELETE CASCADE,
    UNIQUE (project_id, idempotency_key),
    UNIQUE (project_id, id),
    -- A lock exists exactly while a job is processing.
    CONSTRAINT generation_jobs_lock_matches_status CHECK (
        (status = 'processing') = (locked_by IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CONSTRAINT generation_jobs_completed_at CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
    CONSTRAINT generation_jobs_failed_at CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
    CONSTRAINT generation_jobs_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
    CONSTRAINT generation_jobs_attempts_bounded CHECK (attempts <= max_attempts)
);
ALTER TABLE agent_events
    ADD FOREIGN KEY (project_id, job_id) REFERENCES generation_jobs (project_id, id) ON DELETE SET NULL (job_id);

-- At most one open observation job per turn: the coalescing upsert's conflict target.
CREATE UNIQUE INDEX generation_jobs_open_turn_idx ON generation_jobs (session_id, prompt_number)
    WHERE status = 'queued' AND job_type = 'observations' AND NOT sealed;
-- The sweeper's and the claimer's scan.
CREATE INDEX generation_jobs_runnable_idx ON generation_jobs (next_attempt_at) WHERE status = 'queued';
CREATE INDEX generation_jobs_lease_idx ON generation_jobs (lease_expires_at) WHERE status = 'processing';
CREATE INDEX generation_jobs_project_idx ON generation_jobs (project_id, created_at DESC);
CREATE INDEX generation_jobs_status_idx ON generation_jobs (status);

CREATE TABLE generation_job_events (
    id           bigserial PRIMARY KEY,
    job_id       uuid NOT NULL REFERENCES generation_jobs (id) ON DELETE CASCADE,
    team_id      uuid NOT NULL,
    project_id   uuid NOT NULL,
    from_status  text,
    to_status    text NOT NULL,
    actor        text NOT NULL,
    detail       jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX generation_job_events_job_idx ON generation_job_events (job_id, id);

CREATE TABLE observations (
    id               uuid PRIMARY KEY,
    team_id          uuid NOT NULL,
    project_id       uuid NOT NULL,
    session_id       uuid,
    job_id           uuid,
    -- Derived from job and position; makes a job's writes exactly-once.
    generation_key   text NOT NULL UNIQUE,
    origin           text NOT NULL DEFAULT 'generated' CHECK (origin IN ('generated', 'manual')),
    kind             text NOT NULL,
    title            text NOT NULL DEFAULT '',
    subtitle         text NOT NULL DEFAULT '',
    facts            text[] NOT NULL DEFAULT '{}',
    narrative        text NOT NULL DEFAULT '',
    concepts         text[] NOT NULL DEFAULT '{}',
    files_read       text[] NOT NULL DEFAULT '{}',
    files_modified   text[] NOT NULL DEFAULT '{}',
    content          text NOT NULL DEFAULT '',
    metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
    provider         text,
    model            text,
    prompt_number    integer,
    search           tsvector,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, session_id) REFERENCES sessions (project_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, job_id) REFERENCES generation_jobs (project_id, id) ON DELETE SET NULL (job_id)
);
CREATE INDEX observations_search_idx ON observations USING gin (search);
CREATE INDEX observations_recent_idx ON observations (project_id, created_at DESC);
CREATE INDEX observations_job_idx ON observations (job_id) WHERE job_id IS NOT NULL;

CREATE TABLE summaries (
    id               uuid PRIMARY KEY,
    team_id          uuid NOT NULL,
    project_id       uuid NOT NULL,
    session_id       uuid NOT NULL,
    job_id           uuid,
    generation_key   text NOT NULL UNIQUE,
    scope            text NOT NULL CHECK (scope IN ('turn', 'session')),
    prompt_number    integer,
    request          text NOT NULL DEFAULT '',
    investigated     text NOT NULL DEFAULT '',
    learned          text NOT NULL DEFAULT '',
    completed        text NOT NULL DEFAULT '',
    next_steps       text NOT NULL DEFAULT '',
    notes            text NOT NULL DEFAULT '',
    provider         text,
    model            text,
    search           tsvector,
    created_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, session_id) REFERENCES sessions (project_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, job_id) REFERENCES generation_jobs (project_id, id) ON DELETE SET NULL (job_id)
);
CREATE INDEX summaries_search_idx ON summaries USING gin (search);
CREATE INDEX summaries_recent_idx ON summaries (project_id, created_at DESC);

-- Weighted search vectors: title A, facts and subtitle B, narrative C.
CREATE FUNCTION observations_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search :=
        setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A') ||
        setweight(to_tsvector('english', array_to_string(NEW.facts, ' ') || ' ' || coalesce(NEW.subtitle, '')), 'B') ||
        setweight(to_tsvector('english', coalesce(NEW.narrative, '') || ' ' || coalesce(NEW.content, '')), 'C') ||
        setweight(to_tsvector('simple', array_to_string(NEW.files_read || NEW.files_modified, ' ')), 'D');
    RETURN NEW;
END $$;
CREATE TRIGGER observations_search_trg BEFORE INSERT OR UPDATE ON observations
    FOR EACH ROW EXECUTE FUNCTION observations_search_update();

CREATE FUNCTION summaries_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search :=
        setweight(to_tsvector('english', coalesce(NEW.request, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.learned, '') || ' ' || coalesce(NEW.completed, '')), 'B') ||
        setweight(to_tsvector('english', coalesce(NEW.investigated, '') || ' ' || coalesce(NEW.next_steps, '')
                                         || ' ' || coalesce(NEW.notes, '')), 'C');
    RETURN NEW;
END $$;
CREATE TRIGGER summaries_search_trg BEFORE INSERT OR UPDATE ON summaries
    FOR EACH ROW EXECUTE FUNCTION summaries_search_update();
