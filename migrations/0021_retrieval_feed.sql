-- The feed the retrieval index follows (crates/retrieval): every write of a
-- memory or of its vector carries the id of the transaction that made it,
-- and deletions are logged with theirs. An index polls "everything at or
-- past the oldest transaction that was running at my last poll", so it
-- misses nothing whatever order transactions commit in (crates/retrieval/
-- src/store.rs). Idempotent; existing rows keep NULL (a rebuild reads them).

ALTER TABLE observations ADD COLUMN IF NOT EXISTS index_tx xid8;
ALTER TABLE summaries ADD COLUMN IF NOT EXISTS index_tx xid8;
ALTER TABLE observation_embeddings ADD COLUMN IF NOT EXISTS index_tx xid8;
ALTER TABLE summary_embeddings ADD COLUMN IF NOT EXISTS index_tx xid8;

CREATE INDEX IF NOT EXISTS observations_index_tx_idx ON observations (index_tx);
CREATE INDEX IF NOT EXISTS summaries_index_tx_idx ON summaries (index_tx);
CREATE INDEX IF NOT EXISTS observation_embeddings_index_tx_idx ON observation_embeddings (index_tx);
CREATE INDEX IF NOT EXISTS summary_embeddings_index_tx_idx ON summary_embeddings (index_tx);

CREATE OR REPLACE FUNCTION memory_index_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.index_tx := pg_current_xact_id();
    RETURN NEW;
END $$;

CREATE TABLE IF NOT EXISTS memory_index_deletions (
    memory_id   uuid NOT NULL,
    project_id  uuid NOT NULL,
    what        text NOT NULL CHECK (what IN ('observation', 'summary', 'observation_vector', 'summary_vector')),
    index_tx    xid8 NOT NULL DEFAULT pg_current_xact_id(),
    deleted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS memory_index_deletions_tx_idx ON memory_index_deletions (index_tx);
CREATE INDEX IF NOT EXISTS memory_index_deletions_at_idx ON memory_index_deletions (deleted_at);

CREATE OR REPLACE FUNCTION memory_index_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deleted uuid;
BEGIN
    -- Each branch names only the column its table has.
    IF TG_ARGV[0] = 'observation_vector' THEN
        deleted := OLD.observation_id;
    ELSIF TG_ARGV[0] = 'summary_vector' THEN
        deleted := OLD.summary_id;
    ELSE
        deleted := OLD.id;
    END IF;
    INSERT INTO memory_index_deletions (memory_id, project_id, what) VALUES (deleted, OLD.project_id, TG_ARGV[0]);
    RETURN OLD;
END $$;

DROP TRIGGER IF EXISTS observations_index_stamp_trg ON observations;
CREATE TRIGGER observations_index_stamp_trg BEFORE INSERT OR UPDATE ON observations
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();
DROP TRIGGER IF EXISTS summaries_index_stamp_trg ON summaries;
CREATE TRIGGER summaries_index_stamp_trg BEFORE INSERT OR UPDATE ON summaries
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();
DROP TRIGGER IF EXISTS observation_embeddings_index_stamp_trg ON observation_embeddings;
CREATE TRIGGER observation_embeddings_index_stamp_trg BEFORE INSERT OR UPDATE ON observation_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();
DROP TRIGGER IF EXISTS summary_embeddings_index_stamp_trg ON summary_embeddings;
CREATE TRIGGER summary_embeddings_index_stamp_trg BEFORE INSERT OR UPDATE ON summary_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();

DROP TRIGGER IF EXISTS observations_index_deleted_trg ON observations;
CREATE TRIGGER observations_index_deleted_trg AFTER DELETE ON observations
    FOR EACH ROW EXECUTE FUNCTION memory_index_deleted('observation');
DROP TRIGGER IF EXISTS summaries_index_deleted_trg ON summaries;
CREATE TRIGGER summaries_index_deleted_trg AFTER DELETE ON summaries
    FOR EACH ROW EXECUTE FUNCTION memory_index_deleted('summary');
DROP TRIGGER IF EXISTS observation_embeddings_index_deleted_trg ON observation_embeddings;
CREATE TRIGGER observation_embeddings_index_deleted_trg AFTER DELETE ON observation_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_deleted('observation_vector');
DROP TRIGGER IF EXISTS summary_embeddings_index_deleted_trg ON summary_embeddings;
CREATE TRIGGER summary_embeddings_index_deleted_trg AFTER DELETE ON summary_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_deleted('summary_vector');
