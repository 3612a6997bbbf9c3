-- Feedback on memory given back: an agent (MCP `feedback`) or a person
-- (`POST /v1/memories/{id}/feedback`) marks an observation helpful or
-- misleading. Each mark is a row (who, when, why); the counts beside the
-- observation move its ranking for its project (crates/retrieval, `doc.rs`
-- `State`-like factor) and reach every replica's index through the
-- retrieval feed (the update stamps `index_tx`). Audited in `audit_log`.

ALTER TABLE observations
    ADD COLUMN IF NOT EXISTS helpful_count integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS misleading_count integer NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS memory_feedback (
    id              uuid PRIMARY KEY,
    team_id         uuid NOT NULL,
    project_id      uuid NOT NULL,
    observation_id  uuid NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
    verdict         text NOT NULL CHECK (verdict IN ('helpful', 'misleading')),
    note            text NOT NULL DEFAULT '',
    actor_token_id  uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS memory_feedback_observation_idx ON memory_feedback (observation_id, created_at DESC);
