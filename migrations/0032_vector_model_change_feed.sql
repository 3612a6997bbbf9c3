-- A vector whose model changes in place (an UPDATE of `model`) is, to the
-- retrieval feed, the old model's vector deleted: the feed's changed vectors
-- are read for the current model only, so without this an index built before
-- such an UPDATE would keep comparing the old model's vector (migration
-- 0021). The follower applies a poll's deletions before its sets, so a vector
-- changed back to the current model in the same poll is set again
-- (crates/retrieval/src/follow.rs). Idempotent.

DROP TRIGGER IF EXISTS observation_embeddings_model_changed_trg ON observation_embeddings;
CREATE TRIGGER observation_embeddings_model_changed_trg AFTER UPDATE OF model ON observation_embeddings
    FOR EACH ROW WHEN (OLD.model IS DISTINCT FROM NEW.model)
    EXECUTE FUNCTION memory_index_deleted('observation_vector');
DROP TRIGGER IF EXISTS summary_embeddings_model_changed_trg ON summary_embeddings;
CREATE TRIGGER summary_embeddings_model_changed_trg AFTER UPDATE OF model ON summary_embeddings
    FOR EACH ROW WHEN (OLD.model IS DISTINCT FROM NEW.model)
    EXECUTE FUNCTION memory_index_deleted('summary_vector');
