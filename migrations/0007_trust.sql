-- Audit entries name the project they concern, so a project-scoped admin
-- reads only its own project's entries.
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS project_id uuid REFERENCES projects (id) ON DELETE SET NULL;
UPDATE audit_log SET project_id = (detail ->> 'projectId')::uuid
 WHERE project_id IS NULL
   AND detail ->> 'projectId' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
   AND EXISTS (SELECT 1 FROM projects p WHERE p.id = (detail ->> 'projectId')::uuid);
UPDATE audit_log SET project_id = target_id::uuid
 WHERE project_id IS NULL AND target_type = 'project'
   AND target_id ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
   AND EXISTS (SELECT 1 FROM projects p WHERE p.id = target_id::uuid);
CREATE INDEX IF NOT EXISTS audit_log_project_idx ON audit_log (project_id, id DESC) WHERE project_id IS NOT NULL;

-- A manual memory remembers the token that wrote it: its author may delete
-- it without `admin`; every other deletion needs `admin`.
ALTER TABLE observations ADD COLUMN IF NOT EXISTS author_token_id uuid;
