//! The completion statement: the job's observations or summary (each with a
//! generation key unique in the database, and its vector when there is one)
//! and `processing → completed`, written by one statement, so in one round
//! trip and one transaction. The transition comes first in it: a worker
//! that lost its claim is refused and writes nothing.

use cairn_shared::jobs::{
    JobType,
    state_machine::{self, ClaimedJob, Transition, TransitionError, Writes},
};
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

use std::sync::LazyLock;

use crate::generation::{
    embed::{self, Vectors},
    job::spans::TurnCode,
    notices::LiveNotice,
    parse::{Parsed, ParsedObservation, ParsedSummary},
    provider::Usage,
};
use crate::memory::lifecycle;

/// The rows of a completed job, after the state machine's `moved` CTE:
/// `$10` observations, `$11` summaries, `$12` and `$13` their vectors, as
/// jsonb arrays (empty when there are none). Each observation records the
/// session's HEAD (`commit_sha`) and, in `file_refs`, the newest version
/// (`file_versions`: the hook's `fileHash`) of each file it names, with the
/// lines the job saw of it (`lines`, from `spans`). Memory tied to code: the
/// project's older live observations about a file this job's observations
/// modified (its path as given, or relative to / under the session's
/// directory) are re-checked in the same statement against the job's edits
/// (`$14`, see `spans::TurnCode::edits_json`): one drawn from the version
/// the edits started from, whose lines no hunk touched, stays live and is
/// tied to the new version (`file_refs_after_edits`, migration 0020); any
/// other is re-marked — `superseded` (by the new observation) when of the
/// same kind and it modified that file too, else `stale` — each with a
/// `memory_changes` row; nothing is deleted. A memory another
/// completion is re-marking at the same moment is skipped, not waited for
/// (`SKIP LOCKED`): that completion marks it, so concurrent turns that edit
/// one file never queue behind each other's row locks.
/// `sessions.last_generated_at` is marked at most once a second and never waited for (`SKIP LOCKED`:
/// the session's row is the API's to lock while it ingests).
/// Everything a completion writes besides the job's own row: the lifecycle's
/// re-marking of the memories its edits outdate sits between the new rows
/// and the rest.
static COMPLETION_WRITES: LazyLock<String> = LazyLock::new(|| {
    [
        WRITES_BEFORE,
        lifecycle::completion::REMARK_ON_COMPLETION,
        WRITES_AFTER,
    ]
    .concat()
});

/// The completion's new observations and the files they changed.
const WRITES_BEFORE: &str = "
    , observations_written AS (
        INSERT INTO observations (id, team_id, project_id, session_id, job_id, generation_key, origin, kind,
            title, subtitle, facts, narrative, concepts, files_read, files_modified, metadata, provider, model,
            prompt_number, commit_sha, file_refs)
        SELECT o.id, m.team_id, m.project_id, m.session_id, m.id, o.generation_key, 'generated', o.kind,
            o.title, o.subtitle, o.facts, o.narrative, o.concepts, o.files_read, o.files_modified, o.metadata,
            o.provider, o.model, m.prompt_number,
            (SELECT s.head_commit FROM sessions s WHERE s.id = m.session_id AND s.project_id = m.project_id),
            coalesce((SELECT jsonb_agg(jsonb_build_object('path', v.path, 'hash', v.hash)
                                       || CASE WHEN o.lines ? v.path THEN jsonb_build_object('lines', o.lines -> v.path)
                                               ELSE '{}' END
                                       ORDER BY v.path)
                      FROM (SELECT DISTINCT ON (fv.path) fv.path, fv.hash
                            FROM unnest(o.files_read || o.files_modified) f, sessions s, file_versions fv
                            WHERE s.id = m.session_id AND s.project_id = m.project_id
                              AND fv.project_id = m.project_id
                              AND fv.path IN (f, CASE WHEN f LIKE s.cwd || '/%' THEN substr(f, length(s.cwd) + 2) END)
                            ORDER BY fv.path, fv.seen_at DESC) v), '[]'::jsonb)
        FROM moved m, jsonb_to_recordset($10) AS o(id uuid, generation_key text, kind text, title text,
            subtitle text, facts text[], narrative text, concepts text[], files_read text[],
            files_modified text[], metadata jsonb, provider text, model text, lines jsonb)
        RETURNING id, project_id, session_id, kind, files_modified, file_refs, visibility, member_id
    ), changed_files AS MATERIALIZED (
        SELECT w.id, w.project_id, w.kind, w.visibility, w.member_id,
            (SELECT jsonb_object_agg(r ->> 'path', r -> 'hash') FROM jsonb_array_elements(w.file_refs) r
             WHERE r ? 'hash') AS fresh,
            w.files_modified || ARRAY(
                SELECT p FROM (
                    SELECT CASE WHEN f LIKE s.cwd || '/%' THEN substr(f, length(s.cwd) + 2)
                                WHEN f NOT LIKE '/%' THEN s.cwd || '/' || f END AS p
                    FROM unnest(w.files_modified) f, sessions s
                    WHERE s.id = w.session_id AND s.project_id = w.project_id AND coalesce(s.cwd, '') <> '') x
                WHERE p IS NOT NULL) AS paths
        FROM observations_written w WHERE cardinality(w.files_modified) > 0
";

/// The rest of the completion's writes, after the lifecycle's re-marking.
const WRITES_AFTER: &str = "
    ), summaries_written AS (
        INSERT INTO summaries (id, team_id, project_id, session_id, job_id, generation_key, scope, prompt_number,
            request, investigated, learned, completed, next_steps, notes, provider, model)
        SELECT s.id, m.team_id, m.project_id, m.session_id, m.id, s.generation_key, s.scope, m.prompt_number,
            s.request, s.investigated, s.learned, s.completed, s.next_steps, s.notes, s.provider, s.model
        FROM moved m, jsonb_to_recordset($11) AS s(id uuid, generation_key text, scope text, request text,
            investigated text, learned text, completed text, next_steps text, notes text, provider text,
            model text)
    ), observation_vectors AS (
        INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding, reading)
        SELECT v.id, m.project_id, v.model, cardinality(v.embedding), v.embedding, v.reading
        FROM moved m, jsonb_to_recordset($12) AS v(id uuid, model text, reading smallint, embedding real[])
    ), summary_vectors AS (
        INSERT INTO summary_embeddings (summary_id, project_id, model, dims, embedding, reading)
        SELECT v.id, m.project_id, v.model, cardinality(v.embedding), v.embedding, v.reading
        FROM moved m, jsonb_to_recordset($13) AS v(id uuid, model text, reading smallint, embedding real[])
    ), session_marked AS (
        UPDATE sessions s SET last_generated_at = now()
        WHERE s.id = (SELECT x.id FROM sessions x, moved m
                      WHERE x.id = m.session_id AND x.project_id = m.project_id
                        AND (x.last_generated_at IS NULL OR x.last_generated_at < now() - interval '1 second')
                      FOR UPDATE OF x SKIP LOCKED)
    )";

/// Writes the job's rows and completes it; returns what to announce.
pub async fn complete(
    pool: &PgPool,
    job: &ClaimedJob,
    job_type: JobType,
    worker: &str,
    parsed: &Parsed,
    usage: &Usage,
) -> Result<Vec<LiveNotice>, TransitionError> {
    let code = TurnCode::default();
    complete_embedded(pool, None, job, job_type, worker, parsed, usage, &code).await
}

/// [`complete`], each row written with its vector when `embedder` makes one
/// (computed before the statement; a failure leaves the rows without), and
/// with the lines and edits of the job's files (`code`).
#[allow(clippy::too_many_arguments)]
pub async fn complete_embedded(
    pool: &PgPool,
    embedder: Option<&cairn_embed::Embedder>,
    job: &ClaimedJob,
    job_type: JobType,
    worker: &str,
    parsed: &Parsed,
    usage: &Usage,
    code: &TurnCode,
) -> Result<Vec<LiveNotice>, TransitionError> {
    let vectors = embed::for_parsed(embedder, job.id, job_type, parsed).await;
    // A usage without a provider stands for no call: none is stored.
    let usage_json = (!usage.provider.is_empty()).then(|| serde_json::to_value(usage).unwrap_or_default());
    let mut rows = Rows::new(job, &vectors, code);
    match job_type {
        JobType::Observations => {
            for (position, observation) in parsed.observations.iter().enumerate() {
                rows.observation(position, observation, usage);
            }
            // The turn's last observation job also writes the turn's summary.
            if let Some(summary) = &parsed.summary {
                let heuristic = parsed
                    .summary_by_heuristic
                    .then(crate::generation::provider::heuristic::usage);
                rows.summary("turn", summary, heuristic.as_ref().unwrap_or(usage));
            }
        }
        JobType::TurnSummary | JobType::SessionSummary => {
            if let Some(summary) = &parsed.summary {
                let scope = if job_type == JobType::TurnSummary {
                    "turn"
                } else {
                    "session"
                };
                rows.summary(scope, summary, usage);
            }
        }
    }
    let transition = Transition::Complete {
        worker,
        usage: usage_json.as_ref(),
    };
    let mut conn = pool.acquire().await?;
    let notices = std::mem::take(&mut rows.notices);
    state_machine::apply_with(&mut conn, job.project_id, job.id, transition, rows.into_writes()).await?;
    Ok(notices)
}

/// The writes that go with failing a job whose turn's summary was its to
/// write: the heuristic's summary, so the turn keeps one.
pub fn failed_turn_summary(job: &ClaimedJob, summary: &ParsedSummary) -> Writes {
    let no_vectors = Vectors::default();
    let no_code = TurnCode::default();
    let mut rows = Rows::new(job, &no_vectors, &no_code);
    rows.summary("turn", summary, &crate::generation::provider::heuristic::usage());
    rows.into_writes()
}

/// A job's rows as the completion statement's jsonb parameters, and the
/// notices announcing them.
struct Rows<'a> {
    job: &'a ClaimedJob,
    vectors: &'a Vectors,
    code: &'a TurnCode,
    observations: Vec<Value>,
    summaries: Vec<Value>,
    observation_vectors: Vec<Value>,
    summary_vectors: Vec<Value>,
    notices: Vec<LiveNotice>,
}

impl<'a> Rows<'a> {
    fn new(job: &'a ClaimedJob, vectors: &'a Vectors, code: &'a TurnCode) -> Self {
        Rows {
            job,
            vectors,
            code,
            observations: vec![],
            summaries: vec![],
            observation_vectors: vec![],
            summary_vectors: vec![],
            notices: vec![],
        }
    }

    fn observation(&mut self, position: usize, o: &ParsedObservation, usage: &Usage) {
        let id = Uuid::now_v7();
        self.observations.push(json!({
            "id": id, "generation_key": observation_key(self.job.id, position), "kind": o.kind,
            "title": o.title, "subtitle": o.subtitle, "facts": o.facts, "narrative": o.narrative,
            "concepts": o.concepts, "files_read": o.files_read, "files_modified": o.files_modified,
            "metadata": provenance(usage), "provider": usage.provider, "model": usage.model,
            "lines": self.code.lines_json(o.files_read.iter().chain(&o.files_modified)),
        }));
        if let Some(v) = self.vectors.observation(position) {
            self.observation_vectors
                .push(json!({ "id": id, "model": self.vectors.model, "reading": self.vectors.reading, "embedding": v }));
        }
        self.notices
            .push(notice("observation.created", id, self.job, &o.title));
    }

    fn summary(&mut self, scope: &str, s: &ParsedSummary, usage: &Usage) {
        let id = Uuid::now_v7();
        self.summaries.push(json!({
            "id": id, "generation_key": format!("job:{}:summary", self.job.id), "scope": scope,
            "request": s.request, "investigated": s.investigated, "learned": s.learned,
            "completed": s.completed, "next_steps": s.next_steps, "notes": s.notes,
            "provider": usage.provider, "model": usage.model,
        }));
        if let Some(v) = self.vectors.summary.as_deref() {
            self.summary_vectors
                .push(json!({ "id": id, "model": self.vectors.model, "reading": self.vectors.reading, "embedding": v }));
        }
        self.notices
            .push(notice("summary.created", id, self.job, &s.request));
    }

    fn into_writes(self) -> Writes {
        Writes {
            ctes: COMPLETION_WRITES.clone(),
            params: vec![
                Value::Array(self.observations),
                Value::Array(self.summaries),
                Value::Array(self.observation_vectors),
                Value::Array(self.summary_vectors),
                self.code.edits_json(),
            ],
        }
    }
}

fn notice(kind: &'static str, id: Uuid, job: &ClaimedJob, title: &str) -> LiveNotice {
    LiveNotice {
        kind,
        id,
        project_id: job.project_id,
        session_id: job.session_id,
        job_id: job.id,
        title: title.chars().take(200).collect(),
    }
}

/// `job:{id}:obs:{position}`: the same job and position can only ever make one row.
pub fn observation_key(job_id: Uuid, position: usize) -> String {
    format!("job:{job_id}:obs:{position}")
}

/// Marks what the offline extractor wrote, so readers can tell it from a model's work.
fn provenance(usage: &Usage) -> Value {
    json!({ "heuristic": usage.provider == "heuristic" })
}

#[cfg(test)]
mod tests {
    use cairn_shared::jobs::state_machine::{self, Transition};

    use super::COMPLETION_WRITES;

    /// `bench/pgbench_job.sql` is the generator's claim and completion as
    /// pgbench runs them: the completion written from this module's
    /// statement, with one observation like the heuristic's for one Edit.
    /// `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-generator --lib
    /// bench_copy` rewrites it; this test fails when it drifts.
    #[test]
    fn bench_copy_of_the_completion_is_current() {
        let usage = serde_json::json!({ "provider": "heuristic", "model": "heuristic-v1" });
        let transition = Transition::Complete {
            worker: "pgbench",
            usage: Some(&usage),
        };
        let mut completion = state_machine::statement(&transition, &COMPLETION_WRITES);
        let worker = "('pgbench:' || :client_id::text)";
        let observation = "jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), \
            'generation_key', 'pgbench:' || gen_random_uuid(), 'kind', 'change', \
            'title', 'Edited src/lib.rs', 'subtitle', 'replaced 2 lines', 'facts', \
            '[\"src/lib.rs: fn parse now returns Result\"]'::jsonb, 'narrative', \
            'Edited src/lib.rs: parse returns a Result instead of panicking.', 'concepts', \
            '[\"what-changed\"]'::jsonb, 'files_read', '[]'::jsonb, 'files_modified', \
            '[\"src/lib.rs\"]'::jsonb, 'metadata', '{\"heuristic\": true}'::jsonb, \
            'provider', 'heuristic', 'model', 'heuristic-v1'))";
        let usage_literal = format!("'{usage}'::jsonb");
        // Highest numbers first, so `$1` does not eat the front of `$13`.
        let values = [
            (14, "'{}'::jsonb"),
            (13, "'[]'::jsonb"),
            (12, "'[]'::jsonb"),
            (11, "'[]'::jsonb"),
            (10, observation),
            (9, "'{}'::jsonb"),
            (8, worker),
            (7, usage_literal.as_str()),
            (6, "NULL::text"),
            (5, "NULL::timestamptz"),
            (4, "'{processing}'::text[]"),
            (3, worker),
            (2, ":project_id"),
            (1, ":id"),
        ];
        for (n, value) in values {
            completion = completion.replace(&format!("${n}"), value);
        }
        assert!(!completion.contains('$'), "{completion}");
        let claim = std::fs::read_to_string(bench("pgbench_claim_complete.sql")).unwrap();
        let claim = claim
            .split_once("\nWITH next AS (")
            .and_then(|(_, rest)| rest.split_once("\\gset"))
            .map(|(claim, _)| format!("WITH next AS ({claim}\\gset"))
            .expect("bench/pgbench_claim_complete.sql holds the claim");
        let text = format!(
            "-- Written by `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copy`\n\
             -- from crates/core/src/generation/job/write.rs. Do not edit.\n\
             --\n\
             -- One pgbench transaction is one job's claim and completion as the\n\
             -- generator sends them: the claim of bench/pgbench_claim_complete.sql,\n\
             -- then the one completion statement (the Complete transition, one\n\
             -- observation like the heuristic's for one Edit, no vectors, the\n\
             -- session mark). Run it on the database bench/generator.sh seeds:\n\
             --   pgbench -n -M prepared -c 8 -j 2 -T 10 -f bench/pgbench_job.sql <url>\n\n\
             {claim}\n\n{completion};\n"
        );
        let path = bench("pgbench_job.sql");
        if std::env::var_os("CAIRN_UPDATE_BENCH_SQL").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "bench/pgbench_job.sql is not the statement job/write.rs writes: \
             CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copy"
        );
    }

    fn bench(file: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench")
            .join(file)
    }
}
