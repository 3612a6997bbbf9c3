-- Teams, projects, API tokens and the audit log.

CREATE TABLE teams (
    id          uuid PRIMARY KEY,
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id          uuid PRIMARY KEY,
    team_id     uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    slug        text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    settings    jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, slug),
    -- Target of the composite foreign keys that keep a project's rows inside its team.
    UNIQUE (team_id, id)
);

CREATE TABLE api_tokens (
    id            uuid PRIMARY KEY,
    team_id       uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    project_id    uuid,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    scopes        text[] NOT NULL CHECK (
                      cardinality(scopes) > 0
                      AND scopes <@ ARRAY['ingest', 'read', 'admin', 'superadmin']::text[]),
    secret_salt   bytea NOT NULL,
    secret_hash   bytea NOT NULL,
    expires_at    timestamptz,
    revoked_at    timestamptz,
    last_used_at  timestamptz,
    created_by    uuid REFERENCES api_tokens (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE
);
CREATE INDEX api_tokens_team_idx ON api_tokens (team_id, created_at DESC);

CREATE TABLE audit_log (
    id              bigserial PRIMARY KEY,
    team_id         uuid REFERENCES teams (id) ON DELETE CASCADE,
    actor_token_id  uuid REFERENCES api_tokens (id) ON DELETE SET NULL,
    action          text NOT NULL,
    target_type     text NOT NULL,
    target_id       text,
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb,
    request_id      text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_team_idx ON audit_log (team_id, created_at DESC);
