-- PreToolUse file memories: on by default, a project may opt out.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS file_memories boolean NOT NULL DEFAULT true;
