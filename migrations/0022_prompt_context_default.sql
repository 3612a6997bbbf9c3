-- Related memories on a prompt are on by default for new projects: the
-- retrieval engine's relevance gate keeps an unrelated prompt empty
-- (services/api/src/context/prompt.rs). Existing projects keep the choice
-- they have; `PATCH /v1/projects/{id}` turns it on or off.
ALTER TABLE projects ALTER COLUMN prompt_context SET DEFAULT true;
