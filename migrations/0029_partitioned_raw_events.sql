-- Raw agent events and the job event log, partitioned by week with
-- Postgres's own range partitioning, so that raw events past their
-- retention are shed by dropping a week's partition rather than by
-- deleting rows (store/retention.rs; digested events only).
--
-- Existing rows are not copied: each existing table becomes the partition
-- of everything up to the end of the current week (`<table>_before`), or
-- is dropped when empty. Weekly partitions (`<table>_wYYYYMMDD`, Monday 00:00 UTC)
-- are created ahead by `cairn_ensure_weekly_partitions`, called here and at
-- every start; a row outside them lands in `<table>_default`.
--
-- A unique index on a partitioned table must hold the partition key, so an
-- event's idempotency key moves to `agent_event_keys` (one row per stored
-- event, ~5 % of its size; dropped with the event).

CREATE OR REPLACE FUNCTION cairn_ensure_weekly_partitions(parent regclass, ahead interval)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    week timestamptz := date_trunc('week', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    name text;
    created integer := 0;
BEGIN
    WHILE week < now() + ahead LOOP
        name := parent::text || '_w' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
        IF to_regclass(name) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE TABLE %I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)',
                               name, parent, week, week + interval '1 week');
                created := created + 1;
            EXCEPTION
                -- Another replica made it first, or the week is part of `_before`.
                WHEN duplicate_table OR invalid_object_definition THEN NULL;
                -- Rows of that week already sit in the default partition: they stay there.
                WHEN check_violation THEN
                    RAISE WARNING 'partition % not created: the default partition holds rows of its week', name;
            END;
        END IF;
        week := week + interval '1 week';
    END LOOP;
    RETURN created;
END $$;

-- Turns `tbl` into a table partitioned by range of `col`, keeping its rows
-- in `<tbl>_before`. `pk` is the new primary key's column list.
CREATE OR REPLACE FUNCTION cairn_partition_by_week(tbl text, col text, pk text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    old text := tbl || '_before';
    bound timestamptz;
    latest timestamptz;
    r record;
    has_rows boolean;
BEGIN
    EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, old);
    -- Index names are schema-wide: the old table's give way to the new ones.
    FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = old::regclass LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, old || substr(r.relname, length(tbl) + 1));
    END LOOP;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)
                    PARTITION BY RANGE (%I)', tbl, old, col);
    EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (%s)', tbl, pk);
    -- A serial column's sequence belongs to the new table's column now.
    FOR r IN SELECT a.attname, pg_get_serial_sequence(old, a.attname) AS seq FROM pg_attribute a
              WHERE a.attrelid = old::regclass AND a.attnum > 0 AND NOT a.attisdropped LOOP
        IF r.seq IS NOT NULL THEN
            EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.%I', r.seq, tbl, r.attname);
        END IF;
    END LOOP;
    -- Everything stored so far, to the end of this week (or of the latest row's).
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I), max(%I) FROM %I', old, col, old) INTO has_rows, latest;
    bound := date_trunc('week', greatest(now(), latest) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 week';
    IF has_rows THEN
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %L)', old, old || '_range', col, bound);
        -- Its primary key becomes the partitioned table's (the old key is unique within it too).
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I (%s)', old || '_part_key', old, pk);
        FOR r IN SELECT conname FROM pg_constraint WHERE conrelid = old::regclass AND contype = 'p' LOOP
            EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', old, r.conname);
        END LOOP;
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', tbl, old, bound);
    ELSE
        EXECUTE format('DROP TABLE %I', old);
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', tbl || '_default', tbl);
END $$;

-- Raw events.
CREATE TABLE agent_event_keys (
    project_id       uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    idempotency_key  text NOT NULL,
    event_id         uuid NOT NULL,
    received_at      timestamptz NOT NULL,
    PRIMARY KEY (project_id, idempotency_key)
);
INSERT INTO agent_event_keys (project_id, idempotency_key, event_id, received_at)
SELECT project_id, idempotency_key, id, received_at FROM agent_events;
CREATE INDEX agent_event_keys_received_idx ON agent_event_keys (received_at);

SELECT cairn_partition_by_week('agent_events', 'received_at', 'id, received_at');
ALTER TABLE agent_events
    ADD FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (project_id, session_id) REFERENCES sessions (project_id, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (project_id, job_id) REFERENCES generation_jobs (project_id, id) ON DELETE SET NULL (job_id);
CREATE INDEX agent_events_turn_idx ON agent_events (session_id, prompt_number, occurred_at);
CREATE INDEX agent_events_job_idx ON agent_events (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX agent_events_member_idx ON agent_events (team_id, member_id) WHERE member_id IS NOT NULL;

-- The job event log.
SELECT cairn_partition_by_week('generation_job_events', 'created_at', 'id, created_at');
ALTER TABLE generation_job_events
    ADD FOREIGN KEY (job_id) REFERENCES generation_jobs (id) ON DELETE CASCADE;
CREATE INDEX generation_job_events_job_idx ON generation_job_events (job_id, id);
CREATE INDEX generation_job_events_failures_idx ON generation_job_events (created_at)
    WHERE detail ? 'error' OR detail->>'reason' IN ('lease expired', 'attempts exhausted');

SELECT cairn_ensure_weekly_partitions('agent_events', interval '8 weeks');
SELECT cairn_ensure_weekly_partitions('generation_job_events', interval '8 weeks');

-- How long a project keeps raw events; NULL: the deployment's default
-- (`CAIRN_RAW_EVENT_RETENTION_DAYS`), 0: for ever.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS raw_event_retention_days integer
    CHECK (raw_event_retention_days >= 0);
