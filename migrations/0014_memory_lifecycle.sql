-- Memory that stays true: the code a memory is about, its lifecycle state,
-- and a log of every change to that state (each one reversible).

-- The repository a session works in, and its checkout when it started.
ALTER TABLE sessions
    ADD COLUMN IF NOT EXISTS repo_remote text,
    ADD COLUMN IF NOT EXISTS repo_root text,
    ADD COLUMN IF NOT EXISTS head_commit text,
    ADD COLUMN IF NOT EXISTS branch text;

ALTER TABLE observations
    -- The commit the observation was drawn from (the session's HEAD then).
    ADD COLUMN IF NOT EXISTS commit_sha text,
    -- The code it is about: [{"path": "src/a.rs", "hash": "<sha256 hex>", "lines": [start, end]}]
    -- (`hash` and `lines` optional).
    ADD COLUMN IF NOT EXISTS file_refs jsonb NOT NULL DEFAULT '[]'::jsonb,
    -- live: used as is; stale: its code changed since (shown marked, ranked
    -- lower); superseded: a newer observation describes the change; merged:
    -- folded into another (which cites it); archived: retired by the
    -- retention policy (retrievable by id or on request, never injected).
    ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'live',
    ADD COLUMN IF NOT EXISTS state_changed_at timestamptz,
    -- superseded: the newer observation; merged: the one kept.
    ADD COLUMN IF NOT EXISTS replaced_by uuid,
    -- Retrieval (search hits, injected context) feeds decay.
    ADD COLUMN IF NOT EXISTS retrieved_count integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS last_retrieved_at timestamptz;

DO $$ BEGIN
    ALTER TABLE observations ADD CONSTRAINT observations_state_check
        CHECK (state IN ('live', 'stale', 'superseded', 'merged', 'archived'));
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

-- Observations about a file, by path (the staleness re-check and PreToolUse).
CREATE INDEX IF NOT EXISTS observations_file_refs_idx ON observations USING gin (file_refs jsonb_path_ops);

-- Commits a project's sessions were seen at: "as of this commit" resolves to
-- the time the commit was first seen.
CREATE TABLE IF NOT EXISTS project_commits (
    project_id     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    commit_sha     text NOT NULL CHECK (commit_sha ~ '^[0-9a-f]{7,64}$'),
    branch         text,
    first_seen_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, commit_sha)
);

-- The content hash of a file as tools last read or changed it, by project and path.
CREATE TABLE IF NOT EXISTS file_versions (
    project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    path         text NOT NULL,
    hash         text NOT NULL,
    commit_sha   text,
    session_id   uuid,
    seen_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, path, hash)
);
CREATE INDEX IF NOT EXISTS file_versions_latest_idx ON file_versions (project_id, path, seen_at DESC);

-- Every change of an observation's state, by whom and why; `reverted_at`
-- when undone (the observation's earlier state restored).
CREATE TABLE IF NOT EXISTS memory_changes (
    id              uuid PRIMARY KEY,
    team_id         uuid NOT NULL,
    project_id      uuid NOT NULL,
    observation_id  uuid NOT NULL,
    action          text NOT NULL CHECK (action IN ('stale', 'supersede', 'merge', 'archive', 'restore')),
    from_state      text NOT NULL,
    to_state        text NOT NULL,
    -- supersede: the newer observation; merge: the one kept.
    related_id      uuid,
    reason          text NOT NULL DEFAULT '',
    actor           text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    reverted_at     timestamptz,
    reverted_by     text,
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS memory_changes_project_idx ON memory_changes (project_id, created_at DESC);
CREATE INDEX IF NOT EXISTS memory_changes_observation_idx ON memory_changes (observation_id, created_at DESC);
