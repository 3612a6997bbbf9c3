-- People: the members of a team, the tokens they hold, and who wrote what.
--
-- A member is one person in one team: an identity (issuer + subject from the
-- company's OpenID Connect provider, or none for one an admin added by
-- email), a role, and the time they left (offboarded). A token belongs to a
-- member (`laptop`: one per machine, minted by `cairn login`; `session`: a
-- dashboard sign-in, ended on the server by signing out) or to nobody
-- (`service`: CI, integrations, the bootstrap token, every token minted
-- before this migration).
--
-- Sessions, events, memories and audit entries carry the member they came
-- from; rows written before this migration carry none.

CREATE TABLE IF NOT EXISTS members (
    id             uuid PRIMARY KEY,
    team_id        uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    issuer         text,
    subject        text,
    email          text CHECK (email IS NULL OR length(email) BETWEEN 3 AND 320),
    name           text CHECK (name IS NULL OR length(name) <= 200),
    role           text NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_seen_at   timestamptz,
    offboarded_at  timestamptz,
    CHECK ((issuer IS NULL) = (subject IS NULL)),
    CHECK (subject IS NOT NULL OR email IS NOT NULL),
    UNIQUE (team_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS members_identity_idx ON members (team_id, issuer, subject)
    WHERE subject IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS members_email_idx ON members (team_id, lower(email))
    WHERE email IS NOT NULL;

ALTER TABLE api_tokens
    ADD COLUMN IF NOT EXISTS member_id uuid,
    ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'service'
        CHECK (kind IN ('service', 'laptop', 'session')),
    ADD COLUMN IF NOT EXISTS host text CHECK (host IS NULL OR length(host) <= 200);
ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_member_fk;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_member_fk
    FOREIGN KEY (team_id, member_id) REFERENCES members (team_id, id) ON DELETE CASCADE;
ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_kind_member;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_kind_member
    CHECK (kind <> 'laptop' OR member_id IS NOT NULL);
CREATE INDEX IF NOT EXISTS api_tokens_member_idx ON api_tokens (member_id) WHERE member_id IS NOT NULL;
-- A dashboard session is revoked with the token it was opened with.
CREATE INDEX IF NOT EXISTS api_tokens_created_by_idx ON api_tokens (created_by) WHERE created_by IS NOT NULL;

-- Who opened a session: the token (an ingest-only token may end only the
-- sessions it opened) and its member.
ALTER TABLE sessions
    ADD COLUMN IF NOT EXISTS member_id uuid,
    ADD COLUMN IF NOT EXISTS token_id uuid;
CREATE INDEX IF NOT EXISTS sessions_member_idx ON sessions (project_id, member_id) WHERE member_id IS NOT NULL;

ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS member_id uuid;
ALTER TABLE observations ADD COLUMN IF NOT EXISTS member_id uuid;
ALTER TABLE summaries ADD COLUMN IF NOT EXISTS member_id uuid;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS actor_member_id uuid;
CREATE INDEX IF NOT EXISTS observations_member_idx ON observations (project_id, member_id, created_at)
    WHERE member_id IS NOT NULL;

-- A memory drawn from a session belongs to the session's member, whoever
-- writes it (the generator, the embedded engine, an import).
CREATE OR REPLACE FUNCTION memory_member_from_session() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.member_id IS NULL AND NEW.session_id IS NOT NULL THEN
        SELECT s.member_id INTO NEW.member_id FROM sessions s WHERE s.id = NEW.session_id;
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS observations_member ON observations;
CREATE TRIGGER observations_member BEFORE INSERT ON observations
    FOR EACH ROW EXECUTE FUNCTION memory_member_from_session();
DROP TRIGGER IF EXISTS summaries_member ON summaries;
CREATE TRIGGER summaries_member BEFORE INSERT ON summaries
    FOR EACH ROW EXECUTE FUNCTION memory_member_from_session();

-- An audit entry names the member behind the acting token.
CREATE OR REPLACE FUNCTION audit_member_from_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.actor_member_id IS NULL AND NEW.actor_token_id IS NOT NULL THEN
        SELECT t.member_id INTO NEW.actor_member_id FROM api_tokens t WHERE t.id = NEW.actor_token_id;
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS audit_log_member ON audit_log;
CREATE TRIGGER audit_log_member BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_member_from_token();
