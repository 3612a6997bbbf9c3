-- Embeddings of observations and summaries, for vector and hybrid search.
-- One row per embedded memory, in a table of its own (a memory without a
-- vector is simply absent), deleted with the memory it belongs to. `model`
-- and `dims` name what made the vector, so vectors of another model are
-- told apart (and ignored) after a model change.
--
-- The vector is a plain `real[]`: searched exactly, over a bounded number
-- of a project's newest rows (see the API's search/vector.rs). When the
-- server offers pgvector, the extension is enabled and an HNSW-indexed
-- `vector(384)` copy is kept beside it (a generated column).

CREATE TABLE IF NOT EXISTS observation_embeddings (
    observation_id uuid PRIMARY KEY REFERENCES observations (id) ON DELETE CASCADE,
    project_id     uuid NOT NULL,
    model          text NOT NULL,
    dims           integer NOT NULL CHECK (dims > 0),
    embedding      real[] NOT NULL CHECK (cardinality(embedding) = dims),
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS observation_embeddings_project_idx ON observation_embeddings (project_id);

CREATE TABLE IF NOT EXISTS summary_embeddings (
    summary_id uuid PRIMARY KEY REFERENCES summaries (id) ON DELETE CASCADE,
    project_id uuid NOT NULL,
    model      text NOT NULL,
    dims       integer NOT NULL CHECK (dims > 0),
    embedding  real[] NOT NULL CHECK (cardinality(embedding) = dims),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS summary_embeddings_project_idx ON summary_embeddings (project_id);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        CREATE EXTENSION IF NOT EXISTS vector;
        IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_name = 'observation_embeddings' AND column_name = 'embedding_v') THEN
            EXECUTE 'ALTER TABLE observation_embeddings ADD COLUMN embedding_v vector(384)
                         GENERATED ALWAYS AS (CASE WHEN dims = 384 THEN embedding::vector(384) END) STORED';
            EXECUTE 'CREATE INDEX IF NOT EXISTS observation_embeddings_hnsw_idx
                         ON observation_embeddings USING hnsw (embedding_v vector_ip_ops)';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_name = 'summary_embeddings' AND column_name = 'embedding_v') THEN
            EXECUTE 'ALTER TABLE summary_embeddings ADD COLUMN embedding_v vector(384)
                         GENERATED ALWAYS AS (CASE WHEN dims = 384 THEN embedding::vector(384) END) STORED';
            EXECUTE 'CREATE INDEX IF NOT EXISTS summary_embeddings_hnsw_idx
                         ON summary_embeddings USING hnsw (embedding_v vector_ip_ops)';
        END IF;
    END IF;
END
$$;
