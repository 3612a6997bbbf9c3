-- Rules that map an agent's working directory to a project, for team tokens:
-- one token per developer serves every repository of the team.
CREATE TABLE IF NOT EXISTS project_rules (
    id          uuid PRIMARY KEY,
    team_id     uuid NOT NULL,
    project_id  uuid NOT NULL,
    -- git_remote: a normalised remote (`host/owner/repo`); path_prefix: an absolute path.
    kind        text NOT NULL CHECK (kind IN ('git_remote', 'path_prefix')),
    pattern     text NOT NULL CHECK (length(pattern) BETWEEN 1 AND 1000),
    created_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    UNIQUE (team_id, kind, pattern)
);
CREATE INDEX IF NOT EXISTS project_rules_project_idx ON project_rules (team_id, project_id);
