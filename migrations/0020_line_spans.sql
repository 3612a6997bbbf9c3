-- Memory tied to lines of code. An observation's `file_refs` entries may
-- carry `lines`, the spans of the file it is about ([[first, last], ...],
-- 1-based, inclusive, in the numbering of the entry's `hash`). When a later
-- turn edits the file, the completion (services/generator/src/job/write.rs)
-- re-checks each older live memory about it with `file_refs_after_edits`:
-- a memory drawn from the version the edits started from, whose spans no
-- hunk touched, stays live and is tied to the new version with its spans
-- moved; any other is marked stale or superseded, as before.

-- `spans` after `edits` (each edit a list of hunks [old start, old lines,
-- new start, new lines] in the numbering the previous edit left), or NULL
-- when a hunk touches a span.
CREATE OR REPLACE FUNCTION lines_after_edits(spans jsonb, edits jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    edit jsonb;
    span jsonb;
    hunk jsonb;
    moved jsonb;
    lo bigint;
    hi bigint;
    delta bigint;
    os bigint;
    ol bigint;
BEGIN
    IF jsonb_typeof(spans) IS DISTINCT FROM 'array' OR jsonb_array_length(spans) = 0
       OR jsonb_typeof(edits) IS DISTINCT FROM 'array' THEN
        RETURN NULL;
    END IF;
    FOR edit IN SELECT value FROM jsonb_array_elements(edits) LOOP
        IF jsonb_typeof(edit) IS DISTINCT FROM 'array' THEN
            RETURN NULL;
        END IF;
        moved := '[]'::jsonb;
        FOR span IN SELECT value FROM jsonb_array_elements(spans) LOOP
            lo := (span ->> 0)::bigint;
            hi := (span ->> 1)::bigint;
            delta := 0;
            FOR hunk IN SELECT value FROM jsonb_array_elements(edit) LOOP
                os := (hunk ->> 0)::bigint;
                ol := (hunk ->> 1)::bigint;
                IF (ol > 0 AND os + ol <= lo) OR (ol = 0 AND os < lo) THEN
                    delta := delta + (hunk ->> 3)::bigint - ol;      -- wholly before the span
                ELSIF (ol > 0 AND os > hi) OR (ol = 0 AND os >= hi) THEN
                    NULL;                                            -- wholly after it
                ELSE
                    RETURN NULL;                                     -- it touches the span
                END IF;
            END LOOP;
            moved := moved || jsonb_build_array(jsonb_build_array(lo + delta, hi + delta));
        END LOOP;
        spans := moved;
    END LOOP;
    RETURN spans;
END $$;

-- An older memory's `refs` after a turn's edits, or NULL when it must be
-- re-marked. `files` are the memory's files as it names them, `changed` the
-- files the turn changed (every form of each path), `edits` the turn's edits
-- by path ({"before": hash before the first edit or null, "hunks": [...]}),
-- `fresh` the newest hash of each changed path. Kept only when each changed
-- file the memory names has an entry with spans, drawn from the version the
-- edits started from, that no hunk touched; those entries get the fresh
-- hash and moved spans, the others stay as they were.
CREATE OR REPLACE FUNCTION file_refs_after_edits(refs jsonb, files text[], changed text[], edits jsonb,
                                                 fresh jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    ref jsonb;
    edit jsonb;
    spans jsonb;
    path text;
    kept jsonb := '[]'::jsonb;
    handled int := 0;
    needed int;
BEGIN
    IF jsonb_typeof(refs) IS DISTINCT FROM 'array' OR jsonb_typeof(edits) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    SELECT count(DISTINCT f) INTO needed FROM unnest(files) f WHERE f = ANY (changed);
    FOR ref IN SELECT value FROM jsonb_array_elements(refs) LOOP
        path := ref ->> 'path';
        IF NOT (path = ANY (changed)) THEN
            kept := kept || jsonb_build_array(ref);
            CONTINUE;
        END IF;
        edit := edits -> path;
        IF edit IS NULL OR edit ->> 'before' IS NULL OR ref ->> 'hash' IS DISTINCT FROM edit ->> 'before'
           OR fresh ->> path IS NULL THEN
            RETURN NULL;
        END IF;
        spans := lines_after_edits(ref -> 'lines', edit -> 'hunks');
        IF spans IS NULL THEN
            RETURN NULL;
        END IF;
        kept := kept || jsonb_build_array(jsonb_build_object('path', path, 'hash', fresh ->> path, 'lines', spans));
        handled := handled + 1;
    END LOOP;
    IF handled = 0 OR handled < needed THEN
        RETURN NULL;
    END IF;
    RETURN kept;
END $$;
