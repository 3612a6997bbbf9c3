-- Every search is bounded to one project: one GIN over (project_id, search)
-- finds a project's matches directly, instead of intersecting all projects'
-- matches with the project's rows. btree_gin gives GIN its uuid operator
-- class; it is a trusted extension, so a database owner may create it.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE INDEX observations_project_search_idx ON observations USING gin (project_id, search);
DROP INDEX observations_search_idx;
CREATE INDEX summaries_project_search_idx ON summaries USING gin (project_id, search);
DROP INDEX summaries_search_idx;
