-- The W3C traceparent of the ingest request that created a generation job,
-- so the generator's job span continues the same trace (NULL when traces are off).
ALTER TABLE generation_jobs ADD COLUMN traceparent text;
