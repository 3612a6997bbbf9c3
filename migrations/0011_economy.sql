-- One LLM call per turn: the observation job that ends a turn writes the
-- turn's summary in the same call. `summary_by` on a turn_summary job names
-- the job that writes that turn's summary: the turn's last observation job
-- (which sets it when it starts after the Stop), or the turn_summary job
-- itself (when no observation job took it first). Set once, by a
-- conditional UPDATE, so exactly one job writes each turn's summary.
ALTER TABLE generation_jobs ADD COLUMN IF NOT EXISTS summary_by uuid;
