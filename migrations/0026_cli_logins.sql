-- `cairn login`: a laptop asks for a token (its host name, a code to show),
-- a signed-in member approves it in the browser, the laptop collects it
-- once by the secret it was given (stored only as a hash). The token is
-- minted at collection, so no secret is ever stored here.

CREATE TABLE IF NOT EXISTS cli_logins (
    id           uuid PRIMARY KEY,
    poll_hash    bytea NOT NULL,
    user_code    text NOT NULL CHECK (length(user_code) BETWEEN 4 AND 20),
    host         text NOT NULL CHECK (length(host) BETWEEN 1 AND 200),
    team_id      uuid REFERENCES teams (id) ON DELETE CASCADE,
    member_id    uuid,
    approved_at  timestamptz,
    token_id     uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    FOREIGN KEY (team_id, member_id) REFERENCES members (team_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS cli_logins_expires_idx ON cli_logins (expires_at);
