-- How each vector's text was read (crates/embed: `READING`): 1, the first
-- 256 tokens only, as every vector written before this migration; 2, up to
-- four windows of 256 tokens. The generator's backfill re-reads a vector of
-- the current model but an older reading: a text of one window only has its
-- `reading` raised (its vector would be the same), a longer one is embedded
-- again. Until then the old vector is still searched: same model, same space.
--
-- Raising `reading` alone changes nothing the retrieval index holds, so the
-- feed's stamp (migration 0021) now fires only on an update of what the
-- index reads; an insert, or an update of the vector, its model or its
-- project, is stamped as before. The partial indexes find what is left to
-- re-read without a scan, and are empty once it is done. Idempotent.

ALTER TABLE observation_embeddings ADD COLUMN IF NOT EXISTS reading smallint NOT NULL DEFAULT 1;
ALTER TABLE summary_embeddings ADD COLUMN IF NOT EXISTS reading smallint NOT NULL DEFAULT 1;

CREATE INDEX IF NOT EXISTS observation_embeddings_first_reading_idx
    ON observation_embeddings (observation_id) WHERE reading < 2;
CREATE INDEX IF NOT EXISTS summary_embeddings_first_reading_idx
    ON summary_embeddings (summary_id) WHERE reading < 2;

DROP TRIGGER IF EXISTS observation_embeddings_index_stamp_trg ON observation_embeddings;
CREATE TRIGGER observation_embeddings_index_stamp_trg
    BEFORE INSERT OR UPDATE OF observation_id, project_id, model, dims, embedding ON observation_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();
DROP TRIGGER IF EXISTS summary_embeddings_index_stamp_trg ON summary_embeddings;
CREATE TRIGGER summary_embeddings_index_stamp_trg
    BEFORE INSERT OR UPDATE OF summary_id, project_id, model, dims, embedding ON summary_embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_index_stamp();
