//! memory_latency: how fast Cairn gives memory back on a large project:
//! SessionStart context and search latency at p50/p99 under concurrent load.
//!
//! 1. **Corpus.** A fresh database and the real API in-process
//!    (`cairn_testkit::spawn_app`, its pool at the production default of 32
//!    connections), 49 more projects in the bootstrap team
//!    (`POST /v1/admin/projects`), then SQL only: `--obs-total` (1,000,000)
//!    observations, one row number `g` each, inserted by `generate_series`
//!    in batches of `--batch` (100,000) rows on 2 connections, so the
//!    migrations' trigger fills every `search` tsvector. Every
//!    `obs_total / obs_a`-th row belongs to project A (the bootstrap
//!    project, `--obs-a` = 100,000 rows); the others go round-robin to the
//!    49 other projects. Rows are in time order, 180 days up to now, so the
//!    projects' rows interleave on disk as they would in a shared server.
//!    Every 50 observations of a project make one session (the agent is
//!    claude-code, cursor or codex), and each session has one turn or
//!    session summary (≈20,000). Text comes from `vocabulary()`: 24 stop
//!    words, ~680 coding words and camelCase identifiers, 3,000 in all,
//!    ordered by how common they should be. A word of rank r is picked with
//!    probability ∝ 1/r (rank = ⌊3001^u⌋, `u` from `hashint8extended` of the
//!    row number and position), so the corpus is the same on every run.
//!    Per observation: a type of the 8 (discovery and change most often), a
//!    title of 4–10 words, a subtitle of 5–12, 2–5 facts of 6–12, a narrative
//!    of 30–80, 1–3 of the 7 concepts, 1–3 files read and (for bugfix,
//!    feature, refactor, change) 1–2 modified from a pool of 2,000 paths
//!    (also Zipf). Then `VACUUM ANALYZE`.
//! 2. **Queries.** `--queries` (100) distinct queries each of 1, 2 and 4
//!    words. Each word is, by a fixed hash, either one of the 100 most
//!    common coding words ("frequent") or any rarer one; the number of rows
//!    each query matches in its project is counted.
//! 3. **Load.** Per scenario and each of `--concurrency` (8, then 1: 1 is
//!    the service time without queueing), that many tasks share one reqwest
//!    client and send requests back to back with the admin token: a warm-up
//!    of `--warmup-secs`, then `--secs` measured. A request counts when it
//!    started after the warm-up and ended within the window; any non-2xx
//!    answer stops the bench. Scenarios: `session_start` (the Claude Code
//!    SessionStart hook for project A, a new session id per request: the
//!    event is stored, then the context is built), `context` (`GET
//!    /v1/projects/{A}/context`, read only), `search_1w`/`_2w`/`_4w` (`GET
//!    /v1/search` on project A, `limit=20`, summaries included as by
//!    default), and `search_small_1w` (the 1-word queries on a project of
//!    ~18,000 observations).
//!
//! Prints `key=value` lines that `bench/memory.sh` turns into a table:
//! `database`, `corpus`, `matches`, `latency` (p50/p90/p99/max, req/s, and
//! whether p99 meets the aim: context 20 ms, search 30 ms; and the CPU
//! shares of the window from /proc: this process, this database's Postgres
//! backends, the rest of the box) and `latency_class` (search requests
//! split by whether the query has a frequent word). `--psql-vars` writes
//! the ids and sample queries for `bench/explain.sql`; `--keep-db` leaves
//! the database for it.

use std::{
    collections::HashSet,
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use cairn_bench::{drop_database, quantile};
use cairn_testkit::{Options, TestApp, cc, spawn_app_with};
use chrono::{SubsecRound, Utc};
use clap::Parser;
use serde_json::json;
use sqlx::{PgPool, postgres::PgPoolOptions};
use tokio::task::JoinSet;
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Observations in all projects together.
    #[arg(long, default_value_t = 1_000_000)]
    obs_total: i64,
    /// Observations in project A (must divide --obs-total).
    #[arg(long, default_value_t = 100_000)]
    obs_a: i64,
    /// Projects, A included.
    #[arg(long, default_value_t = 50)]
    projects: i64,
    /// Rows per INSERT … SELECT generate_series.
    #[arg(long, default_value_t = 100_000)]
    batch: i64,
    /// Distinct queries per search scenario.
    #[arg(long, default_value_t = 100)]
    queries: usize,
    /// Concurrent requests of the load generator; every scenario runs at each.
    #[arg(long, value_delimiter = ',', default_value = "8,1")]
    concurrency: Vec<usize>,
    /// Warm-up of each scenario, not measured.
    #[arg(long, default_value_t = 3)]
    warmup_secs: u64,
    /// Measured seconds of each scenario.
    #[arg(long, default_value_t = 20)]
    secs: u64,
    /// Scenarios to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "session_start,context,search_1w,search_2w,search_4w,search_small_1w"
    )]
    scenarios: Vec<String>,
    /// CAIRN_DATABASE_MAX_CONNECTIONS of the in-process API (production default 32).
    #[arg(long, default_value_t = 32)]
    db_connections: u32,
    /// Write psql `\set` lines (ids, sample queries) for bench/explain.sql here.
    #[arg(long)]
    psql_vars: Option<PathBuf>,
    /// Leave the database for the caller to drop.
    #[arg(long)]
    keep_db: bool,
}

/// Words in the vocabulary, stop words included.
const VOCABULARY: usize = 3000;
/// File paths in the pool.
const PATHS: usize = 2000;
/// Observations per session.
const PER_SESSION: i64 = 50;
/// The most common coding words: a query word from this band is "frequent".
const FREQUENT_BAND: usize = 100;
/// p99 aims, ms.
const CONTEXT_AIM_MS: f64 = 20.0;
const SEARCH_AIM_MS: f64 = 30.0;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(
        args.obs_a > 0 && args.obs_total % args.obs_a == 0 && args.obs_total / args.obs_a >= 2,
        "--obs-a must divide --obs-total, at most half of it"
    );
    anyhow::ensure!(args.projects >= 2, "--projects: A and at least one other");
    let app = spawn_app_with(Options {
        extra: vec![("CAIRN_DATABASE_MAX_CONNECTIONS", args.db_connections.to_string())],
        ..Options::default()
    })
    .await;
    println!("database url={}", app.database_url);
    let result = run(&args, &app).await;
    if args.keep_db {
        app.pool.close().await;
        result
    } else {
        // Dropped on failure too, so repeated runs do not pile up databases.
        let dropped = drop_database(&app.pool, &app.database_url).await;
        result.and(dropped)
    }
}

async fn run(args: &Args, app: &TestApp) -> anyhow::Result<()> {
    // The bench's own SQL runs on a pool of its own, beside the API's.
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&app.database_url)
        .await?;

    let vocab = vocabulary();
    let projects = create_projects(app, args.projects).await?;
    generate(args, app, &pool, &vocab, &projects).await?;

    let small = projects[1];
    let sets = [1, 2, 4].map(|n| queries(&vocab, n, args.queries));
    let mut scenarios = vec![
        Scenario::new("session_start", Kind::SessionStart, app.project_id, vec![]),
        Scenario::new("context", Kind::Context, app.project_id, vec![]),
    ];
    for (set, name) in sets.iter().zip(["search_1w", "search_2w", "search_4w"]) {
        scenarios.push(Scenario::new(name, Kind::Search, app.project_id, set.clone()));
    }
    scenarios.push(Scenario::new(
        "search_small_1w",
        Kind::Search,
        small,
        sets[0].clone(),
    ));
    scenarios.retain(|s| args.scenarios.iter().any(|n| n == s.name));

    let mut samples = SampleQueries::default();
    for s in scenarios.iter_mut().filter(|s| s.kind == Kind::Search) {
        count_matches(&pool, s).await?;
        if s.project == app.project_id {
            samples.take(s);
        }
    }
    if let Some(path) = &args.psql_vars {
        write_psql_vars(path, app, small, &samples)?;
    }
    sanity_check(app, &scenarios).await?;

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency.iter().copied().max().unwrap_or(1))
        .timeout(Duration::from_secs(30))
        .build()?;
    let target = Arc::new(Target {
        client,
        base: app.base.clone(),
        token: app.admin_token.clone(),
    });
    let scenarios: Vec<Arc<Scenario>> = scenarios.into_iter().map(Arc::new).collect();
    let mut runs = 0;
    for &concurrency in &args.concurrency {
        for scenario in &scenarios {
            let aim = match scenario.kind {
                Kind::Search => SEARCH_AIM_MS,
                _ => CONTEXT_AIM_MS,
            };
            // Request numbers of each run are its own: every SessionStart is a new session.
            let first = runs * 100_000_000;
            runs += 1;
            let run = drive(&target, scenario.clone(), concurrency, first, args, &pool).await?;
            run.print(aim, args.secs);
        }
    }

    pool.close().await;
    Ok(())
}

// ---------------------------------------------------------------- corpus

/// Project ids: `[0]` is A (the bootstrap project), then the others.
async fn create_projects(app: &TestApp, n: i64) -> anyhow::Result<Vec<Uuid>> {
    let mut ids = vec![app.project_id];
    for i in 1..n {
        let (status, res) = app
            .post(
                "/v1/admin/projects",
                Some(&app.admin_token),
                &json!({ "slug": format!("bench-{i:02}"), "name": format!("Bench project {i}") }),
            )
            .await;
        anyhow::ensure!(status == 201, "create project: {status} {res}");
        ids.push(res["project"]["id"].as_str().context("project id")?.parse()?);
    }
    Ok(ids)
}

async fn generate(
    args: &Args,
    app: &TestApp,
    pool: &PgPool,
    vocab: &[String],
    projects: &[Uuid],
) -> anyhow::Result<()> {
    let started = Instant::now();
    let t0 = Utc::now().trunc_subsecs(0);
    sqlx::raw_sql(sqlx::AssertSqlSafe(helpers_sql(args)))
        .execute(pool)
        .await?;
    sqlx::query(
        "INSERT INTO bench.vocab SELECT r::int, w FROM unnest($1::text[]) WITH ORDINALITY AS v(w, r)",
    )
    .bind(vocab)
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO bench.paths SELECT n::int, p FROM unnest($1::text[]) WITH ORDINALITY AS v(p, n)",
    )
    .bind(paths(vocab))
    .execute(pool)
    .await?;
    sqlx::query("INSERT INTO bench.projects SELECT (n - 1)::int, id FROM unnest($1::uuid[]) WITH ORDINALITY AS v(id, n)")
        .bind(projects)
        .execute(pool)
        .await?;

    let sessions = sqlx::query(sqlx::AssertSqlSafe(SESSIONS_SQL))
        .bind(args.obs_total)
        .bind(t0)
        .bind(app.team_id)
        .execute(pool)
        .await?
        .rows_affected();
    let sessions_s = started.elapsed().as_secs_f64();

    // The batches, on the pool's 2 connections at once.
    let obs_started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let batches = (args.obs_total as u64).div_ceil(args.batch as u64) as usize;
    let mut workers = JoinSet::new();
    for _ in 0..2 {
        let (pool, next, team, batch, total) = (
            pool.clone(),
            next.clone(),
            app.team_id,
            args.batch,
            args.obs_total,
        );
        workers.spawn(async move {
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= batches {
                    return anyhow::Ok(());
                }
                let lo = b as i64 * batch + 1;
                let t = Instant::now();
                sqlx::query(sqlx::AssertSqlSafe(observations_sql()))
                    .bind(lo)
                    .bind((lo + batch - 1).min(total))
                    .bind(t0)
                    .bind(team)
                    .execute(&pool)
                    .await?;
                eprintln!(
                    "observations batch {}/{batches}: {:.1} s",
                    b + 1,
                    t.elapsed().as_secs_f64()
                );
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }
    let observations_s = obs_started.elapsed().as_secs_f64();

    let sum_started = Instant::now();
    let summaries = sqlx::query(sqlx::AssertSqlSafe(summaries_sql()))
        .bind(t0)
        .execute(pool)
        .await?
        .rows_affected();
    let summaries_s = sum_started.elapsed().as_secs_f64();
    sqlx::raw_sql("DROP SCHEMA bench CASCADE").execute(pool).await?;
    let generate_s = started.elapsed().as_secs_f64();

    let vacuum_started = Instant::now();
    sqlx::raw_sql("VACUUM ANALYZE").execute(pool).await?;
    let vacuum_s = vacuum_started.elapsed().as_secs_f64();

    let (obs, obs_a): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(*) FILTER (WHERE project_id = $1) FROM observations")
            .bind(app.project_id)
            .fetch_one(pool)
            .await?;
    let sizes: (f64, f64, f64, f64, f64, f64, f64) = sqlx::query_as(
        "SELECT pg_database_size(current_database()) / 1048576.0::float8,
                pg_total_relation_size('observations') / 1048576.0::float8,
                pg_table_size('observations') / 1048576.0::float8,
                (SELECT sum(pg_relation_size(format('%I', indexname)::regclass)) FROM pg_indexes
                 WHERE tablename = 'observations' AND indexdef LIKE '%(search)%'
                    OR tablename = 'observations' AND indexdef LIKE '%, search)%') / 1048576.0::float8,
                pg_indexes_size('observations') / 1048576.0::float8,
                pg_total_relation_size('summaries') / 1048576.0::float8,
                pg_total_relation_size('sessions') / 1048576.0::float8",
    )
    .fetch_one(pool)
    .await?;
    println!(
        "corpus observations={obs} project_a={obs_a} projects={} sessions={sessions} summaries={summaries} \
         vocabulary={VOCABULARY} paths={PATHS} sessions_s={sessions_s:.1} observations_s={observations_s:.1} \
         summaries_s={summaries_s:.1} generate_s={generate_s:.1} vacuum_s={vacuum_s:.1} db_mb={:.0} \
         observations_mb={:.0} observations_table_mb={:.0} search_idx_mb={:.0} observations_indexes_mb={:.0} \
         summaries_mb={:.0} sessions_mb={:.0}",
        projects.len(),
        sizes.0,
        sizes.1,
        sizes.2,
        sizes.3,
        sizes.4,
        sizes.5,
        sizes.6,
    );
    Ok(())
}

/// The generation helpers, in a schema of their own (dropped when done).
/// `bench.slots(lo, hi, t0)` says, for row numbers `lo..=hi`, which project
/// (`pn`, 0 = A), its position in that project, its session and its time.
fn helpers_sql(args: &Args) -> String {
    let every = args.obs_total / args.obs_a;
    let others = args.projects - 1;
    let step_secs = 180.0 * 86_400.0 / args.obs_total as f64;
    format!(
        "CREATE SCHEMA bench;
         CREATE TABLE bench.vocab (rank int PRIMARY KEY, word text NOT NULL);
         CREATE TABLE bench.paths (n int PRIMARY KEY, path text NOT NULL);
         CREATE TABLE bench.projects (pn int PRIMARY KEY, id uuid NOT NULL);
         -- u in [0, 1) from (seed, k), the same on every run.
         CREATE FUNCTION bench.u(seed bigint, k int) RETURNS float8 LANGUAGE sql IMMUTABLE
             AS $$ SELECT hashint8extended(seed, k)::float8 / 18446744073709551616.0 + 0.5 $$;
         -- Zipf-like rank in 1..=n: P(r) ∝ 1/r.
         CREATE FUNCTION bench.zipf(seed bigint, k int, n int) RETURNS int LANGUAGE sql IMMUTABLE
             AS $$ SELECT least(n, floor(exp(bench.u(seed, k) * ln(n + 1)))::int) $$;
         -- A time-ordered id, like the API's UUIDv7.
         CREATE FUNCTION bench.uuid7(t timestamptz, key text) RETURNS uuid LANGUAGE sql IMMUTABLE
             AS $$ SELECT (lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7'
                           || substr(md5(key), 1, 3) || '8' || substr(md5(key), 4, 15))::uuid $$;
         CREATE FUNCTION bench.session_id(pn int, sidx bigint) RETURNS uuid LANGUAGE sql IMMUTABLE
             AS $$ SELECT md5('bench-session:' || pn || ':' || sidx)::uuid $$;
         CREATE FUNCTION bench.slots(lo bigint, hi bigint, t0 timestamptz)
             RETURNS TABLE (g bigint, pn int, idx bigint, sidx bigint, t timestamptz) LANGUAGE sql IMMUTABLE
             AS $$ SELECT g, x.pn, x.idx, x.idx / {PER_SESSION},
                          t0 - interval '180 days' + g * interval '{step_secs} seconds'
                   FROM generate_series(lo, hi) g,
                   LATERAL (SELECT CASE WHEN g % {every} = 0 THEN 0
                                        ELSE 1 + ((g - g / {every} - 1) % {others})::int END AS pn,
                                   CASE WHEN g % {every} = 0 THEN g / {every} - 1
                                        ELSE (g - g / {every} - 1) / {others} END AS idx) x $$;"
    )
}

/// $1 rows in all, $2 t0, $3 team. One session per `PER_SESSION` observations of a project.
const SESSIONS_SQL: &str = "
    INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, cwd, status, prompt_counter,
                          started_at, ended_at, created_at, updated_at)
    SELECT bench.session_id(s.pn, s.sidx), $3, p.id,
           CASE (hashint8extended(s.pn * 1000000 + s.sidx, 1) & 1023) % 20
               WHEN 0 THEN 'codex' WHEN 1 THEN 'cursor' WHEN 2 THEN 'cursor' ELSE 'claude-code' END,
           'bench-' || s.pn || '-' || s.sidx, '/home/dev/project-' || s.pn, 'ended', 10,
           min(s.t), max(s.t), min(s.t), max(s.t)
    FROM bench.slots(1, $1, $2) s JOIN bench.projects p USING (pn)
    GROUP BY s.pn, s.sidx, p.id";

/// `n` words (an int expression) for `seed` (a bigint expression), space-separated.
fn words(seed: &str, n: &str) -> String {
    format!(
        "(SELECT string_agg(v.word, ' ' ORDER BY k) FROM generate_series(1, ({n})::int) k
          JOIN bench.vocab v ON v.rank = bench.zipf({seed}, k, {VOCABULARY}))"
    )
}

/// Up to `n` distinct paths for `seed`, hot files most often.
fn files(seed: &str, n: &str) -> String {
    format!(
        "(SELECT array_agg(DISTINCT p.path) FROM generate_series(1, ({n})::int) i
          JOIN bench.paths p ON p.n = bench.zipf({seed}, i, {PATHS}))"
    )
}

/// One batch: $1..=$2 row numbers, $3 t0, $4 team. `x.h` is a per-row hash whose
/// "digits" (h % 7, h / 7 % 8, …) pick the lengths independently.
fn observations_sql() -> String {
    let kind = "CASE WHEN u < 0.30 THEN 'discovery' WHEN u < 0.50 THEN 'change' WHEN u < 0.65 THEN 'bugfix'
                     WHEN u < 0.80 THEN 'feature' WHEN u < 0.90 THEN 'refactor' WHEN u < 0.96 THEN 'decision'
                     WHEN u < 0.99 THEN 'security_note' ELSE 'security_alert' END";
    format!(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, subtitle,
             facts, narrative, concepts, files_read, files_modified, provider, prompt_number, created_at, updated_at)
         SELECT bench.uuid7(s.t, 'o:' || s.g), $4, p.id, bench.session_id(s.pn, s.sidx), 'bench:' || s.g, x.kind,
             {title}, {subtitle},
             (SELECT array_agg({fact} ORDER BY f) FROM generate_series(1, (2 + x.h / 56 % 4)::int) f),
             {narrative},
             (SELECT array_agg((ARRAY['how-it-works', 'why-it-exists', 'what-changed', 'problem-solution',
                                      'gotcha', 'pattern', 'trade-off'])[1 + (x.h / 239904 + i * 3) % 7] ORDER BY i)
              FROM generate_series(1, (1 + x.h / 79968 % 3)::int) i),
             {read},
             CASE WHEN x.kind IN ('bugfix', 'feature', 'refactor', 'change') THEN {modified} ELSE '{{}}' END,
             'heuristic', 1 + (s.idx % {PER_SESSION}) / 5, s.t, s.t
         FROM bench.slots($1, $2, $3) s JOIN bench.projects p USING (pn),
         LATERAL (SELECT hashint8extended(s.g, 0) & 9223372036854775807 AS h, {kind} AS kind
                  FROM (SELECT bench.u(s.g * 64, 0) AS u) r) x",
        title = words("s.g * 64 + 1", "4 + x.h % 7"),
        subtitle = words("s.g * 64 + 2", "5 + x.h / 7 % 8"),
        fact = words("s.g * 64 + 8 + f", "6 + (x.h / 224 + f) % 7"),
        narrative = words("s.g * 64 + 3", "30 + x.h / 1568 % 51"),
        read = files("s.g * 64 + 5", "1 + x.h / 1679328 % 3"),
        modified = files("s.g * 64 + 6", "1 + x.h / 5037984 % 2"),
    )
}

/// One summary per session, a minute after its last observation; $1 t0.
fn summaries_sql() -> String {
    format!(
        "INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, prompt_number,
             request, investigated, learned, completed, next_steps, provider, created_at)
         SELECT bench.uuid7(x.t, 'su:' || se.id), se.team_id, se.project_id, se.id, 'bench:su:' || se.id,
             CASE WHEN x.h / 327680 % 4 = 0 THEN 'session' ELSE 'turn' END,
             CASE WHEN x.h / 327680 % 4 = 0 THEN NULL ELSE 1 + x.h / 1310720 % 10 END,
             {request}, {investigated}, {learned}, {completed}, {next_steps}, 'heuristic', x.t
         FROM sessions se,
         LATERAL (SELECT hashtext(se.external_session_id)::bigint * 64 AS seed,
                         hashint8extended(hashtext(se.external_session_id), 0) & 9223372036854775807 AS h,
                         least(se.ended_at + interval '1 minute', $1) AS t) x",
        request = words("x.seed + 1", "8 + x.h % 8"),
        investigated = words("x.seed + 2", "10 + x.h / 8 % 16"),
        learned = words("x.seed + 3", "10 + x.h / 128 % 16"),
        completed = words("x.seed + 4", "10 + x.h / 2048 % 16"),
        next_steps = words("x.seed + 5", "6 + x.h / 32768 % 10"),
    )
}

// ---------------------------------------------------------------- queries

#[derive(Clone, Debug)]
struct Query {
    text: String,
    /// Has a word of the `FREQUENT_BAND`.
    frequent: bool,
    /// Rows of the scenario's project it matches.
    matches: i64,
}

/// `count` distinct queries of `n` distinct content words each. Each word is,
/// by a fixed hash, one of the `FREQUENT_BAND` most common coding words or
/// any rarer one, half and half.
fn queries(vocab: &[String], n: usize, count: usize) -> Vec<Query> {
    let content = &vocab[STOP_WORDS.split_whitespace().count()..];
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut seed = (n as u64) << 32;
    while out.len() < count {
        let mut picked: Vec<usize> = Vec::with_capacity(n);
        while picked.len() < n {
            let x = splitmix64(&mut seed);
            let rank = if x & 1 == 0 {
                (x >> 1) as usize % FREQUENT_BAND
            } else {
                FREQUENT_BAND + (x >> 1) as usize % (content.len() - FREQUENT_BAND)
            };
            if !picked.contains(&rank) {
                picked.push(rank);
            }
        }
        let text = picked
            .iter()
            .map(|&r| content[r].as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if seen.insert(text.clone()) {
            out.push(Query {
                text,
                frequent: picked.iter().any(|&r| r < FREQUENT_BAND),
                matches: 0,
            });
        }
    }
    out
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Counts each query's matching observations, as the search's text condition does.
async fn count_matches(pool: &PgPool, scenario: &mut Scenario) -> anyhow::Result<()> {
    for q in &mut scenario.queries {
        q.matches = sqlx::query_scalar(
            "SELECT count(*) FROM observations
             WHERE project_id = $1 AND search @@ websearch_to_tsquery('english', $2)",
        )
        .bind(scenario.project)
        .bind(&q.text)
        .fetch_one(pool)
        .await?;
    }
    let mut m: Vec<f64> = scenario.queries.iter().map(|q| q.matches as f64).collect();
    m.sort_by(f64::total_cmp);
    println!(
        "matches scenario={} queries={} with_frequent={} median={:.0} p90={:.0} max={:.0} zero={}",
        scenario.name,
        m.len(),
        scenario.queries.iter().filter(|q| q.frequent).count(),
        quantile(&m, 0.5),
        quantile(&m, 0.9),
        quantile(&m, 1.0),
        m.iter().filter(|&&c| c == 0.0).count(),
    );
    Ok(())
}

/// The queries bench/explain.sql runs: of each set on project A, the one
/// matching most rows, and of the 1-word set also the median one.
#[derive(Default)]
struct SampleQueries {
    q1_max: String,
    q1_median: String,
    q2_max: String,
    q4_max: String,
}

impl SampleQueries {
    fn take(&mut self, s: &Scenario) {
        let mut by_matches = s.queries.clone();
        by_matches.sort_by_key(|q| q.matches);
        let max = by_matches.last().map(|q| q.text.clone()).unwrap_or_default();
        match s.name {
            "search_1w" => {
                self.q1_max = max;
                self.q1_median = by_matches[by_matches.len() / 2].text.clone();
            }
            "search_2w" => self.q2_max = max,
            "search_4w" => self.q4_max = max,
            _ => {}
        }
    }
}

fn write_psql_vars(path: &Path, app: &TestApp, small: Uuid, q: &SampleQueries) -> anyhow::Result<()> {
    let prompt: Vec<&str> = [&q.q4_max, &q.q2_max].iter().flat_map(|s| s.split(' ')).collect();
    let mut out = String::new();
    for (name, value) in [
        ("project_a", app.project_id.to_string()),
        ("project_small", small.to_string()),
        ("q1_max", q.q1_max.clone()),
        ("q1_median", q.q1_median.clone()),
        ("q2_max", q.q2_max.clone()),
        ("q4_max", q.q4_max.clone()),
        // gather::any_word_query of a prompt: its words, lowercased, sorted, joined with ` | `.
        ("prompt_or", {
            let mut w: Vec<String> = prompt.iter().map(|w| w.to_lowercase()).collect();
            w.sort();
            w.dedup();
            w.join(" | ")
        }),
    ] {
        writeln!(out, "\\set {name} '{value}'")?;
    }
    std::fs::write(path, out).with_context(|| format!("write {}", path.display()))
}

// ---------------------------------------------------------------- load

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    SessionStart,
    Context,
    Search,
}

struct Scenario {
    name: &'static str,
    kind: Kind,
    project: Uuid,
    queries: Vec<Query>,
}

impl Scenario {
    fn new(name: &'static str, kind: Kind, project: Uuid, queries: Vec<Query>) -> Self {
        Self {
            name,
            kind,
            project,
            queries,
        }
    }

    /// Request number `i`, and its class (1 when its query has a frequent word).
    fn request(&self, t: &Target, i: usize) -> (reqwest::RequestBuilder, usize) {
        match self.kind {
            Kind::SessionStart => {
                let body = cc(
                    &format!("bench-start-{i}"),
                    "SessionStart",
                    json!({ "source": "startup" }),
                );
                let url = format!("{}/v1/hooks/claude-code?project={}", t.base, self.project);
                (t.client.post(url).bearer_auth(&t.token).json(&body), 0)
            }
            Kind::Context => {
                let url = format!("{}/v1/projects/{}/context", t.base, self.project);
                (t.client.get(url).bearer_auth(&t.token), 0)
            }
            Kind::Search => {
                let q = &self.queries[i % self.queries.len()];
                let req = t
                    .client
                    .get(format!("{}/v1/search", t.base))
                    .bearer_auth(&t.token)
                    .query(&[
                        ("projectId", self.project.to_string()),
                        ("query", q.text.clone()),
                        ("limit", "20".into()),
                    ]);
                (req, usize::from(q.frequent))
            }
        }
    }
}

struct Target {
    client: reqwest::Client,
    base: String,
    token: String,
}

/// One request per scenario before the load: the answers have what they should.
async fn sanity_check(app: &TestApp, scenarios: &[Scenario]) -> anyhow::Result<()> {
    for s in scenarios {
        match s.kind {
            Kind::SessionStart => {
                let body = cc("bench-sanity", "SessionStart", json!({ "source": "startup" }));
                let (status, res) = app
                    .post(
                        &format!("/v1/hooks/claude-code?project={}", s.project),
                        Some(&app.admin_token),
                        &body,
                    )
                    .await;
                let context = res["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap_or_default();
                anyhow::ensure!(
                    status == 200 && !context.is_empty(),
                    "SessionStart: {status} {res}"
                );
                println!("context session_start_chars={}", context.chars().count());
            }
            Kind::Context => {
                let (status, res) = app
                    .get(
                        &format!("/v1/projects/{}/context", s.project),
                        Some(&app.admin_token),
                    )
                    .await;
                anyhow::ensure!(status == 200, "context: {status} {res}");
            }
            Kind::Search => {
                let Some(q) = s.queries.iter().max_by_key(|q| q.matches) else {
                    continue;
                };
                let url = format!(
                    "/v1/search?projectId={}&query={}&limit=20",
                    s.project,
                    q.text.replace(' ', "+")
                );
                let (status, res) = app.get(&url, Some(&app.admin_token)).await;
                let hits = res["results"].as_array().map_or(0, Vec::len);
                anyhow::ensure!(
                    status == 200 && hits as i64 >= q.matches.min(20),
                    "search {:?} ({} matches): {status}, {hits} results: {res}",
                    q.text,
                    q.matches
                );
            }
        }
    }
    Ok(())
}

struct Run {
    name: &'static str,
    concurrency: usize,
    /// (ms, class) of each measured request.
    samples: Vec<(f64, usize)>,
    has_classes: bool,
    /// % of all cores over the window: busy, this process, this database's backends, the rest.
    cpu: (f64, f64, f64, f64),
}

async fn drive(
    target: &Arc<Target>,
    scenario: Arc<Scenario>,
    concurrency: usize,
    first: usize,
    args: &Args,
    pool: &PgPool,
) -> anyhow::Result<Run> {
    let start = Instant::now();
    let measured_from = start + Duration::from_secs(args.warmup_secs);
    let end = measured_from + Duration::from_secs(args.secs);
    let next = Arc::new(AtomicUsize::new(first));
    let mut tasks = JoinSet::new();
    for _ in 0..concurrency {
        let (target, scenario, next) = (target.clone(), scenario.clone(), next.clone());
        tasks.spawn(async move {
            let mut samples = Vec::new();
            while Instant::now() < end {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (request, class) = scenario.request(&target, i);
                let sent = Instant::now();
                let response = request.send().await?;
                let status = response.status();
                let body = response.bytes().await?;
                let done = Instant::now();
                if !status.is_success() {
                    bail!(
                        "{} request {i}: {status} {}",
                        scenario.name,
                        String::from_utf8_lossy(&body)
                    );
                }
                if sent >= measured_from && done <= end {
                    samples.push(((done - sent).as_secs_f64() * 1000.0, class));
                }
            }
            anyhow::Ok(samples)
        });
    }
    // CPU over the measured window (a failing task ends the wait early; its error wins below).
    tokio::time::sleep_until(measured_from.into()).await;
    let cpu_from = CpuTicks::read(pool).await;
    tokio::time::sleep_until(end.into()).await;
    let cpu = CpuTicks::read(pool).await.since(&cpu_from);
    let mut samples = Vec::new();
    while let Some(done) = tasks.join_next().await {
        samples.extend(done??);
    }
    Ok(Run {
        name: scenario.name,
        concurrency,
        samples,
        has_classes: scenario.kind == Kind::Search,
        cpu,
    })
}

/// CPU time from /proc, in clock ticks: the machine's busy and total time
/// (all cores), this process's (the API and the load generator), and the
/// Postgres backends serving this database.
#[derive(Clone, Copy, Default)]
struct CpuTicks {
    busy: u64,
    total: u64,
    bench: u64,
    postgres: u64,
}

impl CpuTicks {
    async fn read(pool: &PgPool) -> Self {
        let pids: Vec<i32> =
            sqlx::query_scalar("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
                .fetch_all(pool)
                .await
                .unwrap_or_default();
        let (busy, total) = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| {
                let t: Vec<u64> = s
                    .lines()
                    .next()?
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|v| v.parse().ok())
                    .collect();
                // user nice system idle iowait irq softirq steal (guest time is inside user)
                let total: u64 = t.iter().take(8).sum();
                Some((total - t.get(3)? - t.get(4)?, total))
            })
            .unwrap_or_default();
        Self {
            busy,
            total,
            bench: process_ticks("self"),
            postgres: pids.iter().map(|pid| process_ticks(&pid.to_string())).sum(),
        }
    }

    /// Shares of all cores' time since `earlier`, in %: (busy, bench, postgres, other).
    fn since(&self, earlier: &Self) -> (f64, f64, f64, f64) {
        let total = self.total.saturating_sub(earlier.total).max(1) as f64;
        let pct = |now: u64, then: u64| now.saturating_sub(then) as f64 * 100.0 / total;
        let (busy, bench, postgres) = (
            pct(self.busy, earlier.busy),
            pct(self.bench, earlier.bench),
            pct(self.postgres, earlier.postgres),
        );
        (busy, bench, postgres, (busy - bench - postgres).max(0.0))
    }
}

/// utime + stime of /proc/<pid>/stat, 0 when it cannot be read.
fn process_ticks(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // Fields after the `(comm)`: state is the 3rd field, utime and stime the 14th and 15th.
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

impl Run {
    fn print(&self, aim_ms: f64, secs: u64) {
        let mut ms: Vec<f64> = self.samples.iter().map(|s| s.0).collect();
        ms.sort_by(f64::total_cmp);
        let p99 = quantile(&ms, 0.99);
        println!(
            "latency scenario={} concurrency={} requests={} rps={:.0} p50_ms={:.1} p90_ms={:.1} p99_ms={p99:.1} max_ms={:.1} \
             aim_p99_ms={aim_ms:.0} meets={} cpu_busy_pct={:.0} cpu_bench_pct={:.0} cpu_postgres_pct={:.0} \
             cpu_other_pct={:.0}",
            self.name,
            self.concurrency,
            ms.len(),
            ms.len() as f64 / secs as f64,
            quantile(&ms, 0.5),
            quantile(&ms, 0.9),
            quantile(&ms, 1.0),
            if p99 < aim_ms { "yes" } else { "no" },
            self.cpu.0,
            self.cpu.1,
            self.cpu.2,
            self.cpu.3,
        );
        if !self.has_classes {
            return;
        }
        for (class, label) in [(1, "frequent"), (0, "rare_only")] {
            let mut ms: Vec<f64> = self
                .samples
                .iter()
                .filter(|s| s.1 == class)
                .map(|s| s.0)
                .collect();
            ms.sort_by(f64::total_cmp);
            println!(
                "latency_class scenario={} concurrency={} class={label} requests={} p50_ms={:.1} p99_ms={:.1} \
                 max_ms={:.1}",
                self.name,
                self.concurrency,
                ms.len(),
                quantile(&ms, 0.5),
                quantile(&ms, 0.99),
                quantile(&ms, 1.0),
            );
        }
    }
}

// ---------------------------------------------------------------- vocabulary

/// Ranked first: the english configuration drops them, as it drops them from real text.
const STOP_WORDS: &str =
    "the to a of in and is for when with on it that this from by as be not at after before but if";

/// Coding words, roughly most common first.
const WORDS: &str = "
    error test file function config request response server client cache query index table column row
    value type struct field method module crate package build release deploy commit branch merge review
    bug fix issue panic crash timeout retry connection pool thread task worker queue job event hook
    session token user project team endpoint route handler middleware auth permission scope secret key
    hash signature header body payload json schema migration database postgres redis transaction lock
    lease claim state status check validate parse serialize encode decode string number integer array
    list map vector buffer stream channel async await future runtime tokio spawn loop iterator closure
    trait generic lifetime borrow reference pointer memory allocation heap stack size limit budget latency
    throughput benchmark metric log trace span debug warning level output input argument parameter option
    flag default environment variable path directory folder name uuid timestamp date clock duration
    interval deadline cursor page offset order sort filter search match rank score weight word text prompt
    summary observation context agent model provider tool call result failure success backoff idempotency
    duplicate conflict unique constraint foreign primary insert update delete select join group count
    average percentile histogram sample cpu disk network socket port host address url http tls
    certificate proxy balancer replica cluster node container docker image volume compose kubernetes pod
    service ingress helm chart template render markdown html css javascript typescript rust python shell
    script bash command terminal editor compile compiler linker macro attribute derive feature workspace
    dependency version semver lockfile cargo clippy lint unsafe ownership mutex rwlock atomic arc box
    hashmap btree enum variant pattern guard unwrap expect none null empty clone copy drop display format
    print write read open close flush fsync seek truncate rename remove create exists metadata owner mode
    symlink watch notify signal interrupt shutdown graceful restart reload health readiness liveness probe
    startup ready alive coalesce seal sweep sweeper wakeup generator heuristic privacy redact tag private
    skip estimate system assistant turn stop compact resume clear subagent transcript claude codex
    websocket grpc protobuf rest graphql webhook callback listener subscriber publisher topic partition
    offset consumer producer broker kafka rabbitmq nats backpressure throttle ratelimit quota burst
    window bucket leaky jitter exponential circuit breaker fallback degrade failover election leader
    follower raft consensus quorum snapshot checkpoint wal vacuum analyze explain plan scan seq bitmap
    gin gist btree brin tsvector tsquery rank trigram collation locale encoding utf8 ascii unicode
    normalize lowercase uppercase trim split join concat regex glob wildcard escape quote sanitize inject
    injection xss csrf cors origin cookie jwt oauth oidc saml sso mfa password bcrypt argon salt pepper
    nonce iv aes rsa ecdsa ed25519 keypair rotate revoke expire refresh bearer api admin superadmin
    tenant tenancy isolation audit compliance gdpr retention purge archive backup restore dump export
    import csv yaml toml ini dotenv secretstore vault kms sidecar daemon cron scheduler timer tick epoch
    monotonic wallclock timezone utc offset parsing lexer tokenizer grammar ast visitor walker pass
    optimizer inline codegen wasm ffi bindgen abi linkage symbol mangle demangle backtrace stacktrace
    coredump segfault overflow underflow divide zero nan infinity precision rounding float decimal bigint
    serial sequence identity generated computed virtual materialized view refresh trigger procedure
    function plpgsql cte recursive window partition lateral subquery correlated aggregate distinct union
    intersect except having limit fetch prepared statement portal bind describe execute sync pipeline
    pipelining multiplex keepalive idle reap evict ttl stale fresh warm cold hot eviction lru lfu arc
    prefetch readahead pagecache dirty writeback compaction fragmentation bloat reindex rebuild
    concurrently blocking nonblocking poll epoll kqueue iouring reactor executor waker pin unpin send
    sync static dynamic dispatch vtable monomorphize specialize coerce cast convert infallible fallible
    anyhow thiserror context chain cause source report diagnostic span miette color ansi tty pager
    fixture mock stub fake spy assert snapshot golden proptest fuzz quickcheck harness flaky race
    deadlock livelock starvation contention hotspot profile flamegraph perf sampling instrument
    opentelemetry prometheus grafana alert dashboard slo sli oncall incident postmortem
    rollback rollout canary bluegreen toggle experiment cohort segment funnel retention
    onboarding signup login logout captcha spam abuse ban block allowlist
    denylist firewall vpn bastion ssh scp rsync tar gzip zstd brotli compress decompress chunk
    multipart upload download presign bucket object blob s3 gcs azure cdn edge etag
    conditional range partial resumable streaming sse longpoll heartbeat ping pong reconnect jitter
";

/// Identifier parts: the rest of the vocabulary is camelCase `verbNoun`, rarest last.
const VERBS: &str =
    "parse load build fetch resolve encode decode flush spawn retry validate render merge split emit
    claim seal drain sweep index rank score hash sign verify mint revoke cache evict lookup insert update
    delete select filter sort wrap unwrap open close read write send recv poll apply compute normalize";
const NOUNS: &str =
    "Config Request Response Token Session Project Team Event Job Queue Worker Pool Cache Index
    Query Cursor Page Filter Result Error Budget Lease Claim Batch Chunk Buffer Stream Channel Payload
    Header Body Schema Migration Table Row Column Summary Observation Context Prompt Agent Model Provider
    Hook Handler Router Server Client Socket Timer Deadline Snapshot Checkpoint Transcript Turn Tool Path
    File Dir Manifest Lockfile Workspace Crate Module Trait Struct Field Method Span Trace Metric Vector";

/// Directories of the path pool, each with its file extension.
const DIRS: &[(&str, &str)] = &[
    ("services/api/src", "rs"),
    ("services/api/src/routes", "rs"),
    ("services/api/src/search", "rs"),
    ("services/api/src/context", "rs"),
    ("services/api/src/ingest", "rs"),
    ("services/api/src/auth", "rs"),
    ("services/api/src/store", "rs"),
    ("services/api/tests", "rs"),
    ("services/generator/src", "rs"),
    ("services/generator/src/provider", "rs"),
    ("services/generator/src/prompt", "rs"),
    ("services/generator/src/parse", "rs"),
    ("crates/shared/src", "rs"),
    ("crates/shared/src/db", "rs"),
    ("crates/cli/src", "rs"),
    ("crates/testkit/src", "rs"),
    ("web/src/components", "tsx"),
    ("web/src/pages", "tsx"),
    ("web/src/lib", "ts"),
    ("web/src/hooks", "ts"),
    ("migrations", "sql"),
    ("docs", "md"),
    ("docs/adr", "md"),
    ("scripts", "sh"),
    ("deploy/helm/templates", "yaml"),
    ("tools/py", "py"),
];

/// The ranked vocabulary: stop words, coding words, then `verbNoun` identifiers up to `VOCABULARY`.
fn vocabulary() -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out: Vec<String> = STOP_WORDS
        .split_whitespace()
        .chain(WORDS.split_whitespace())
        .filter(|w| seen.insert(w.to_string()))
        .map(str::to_string)
        .collect();
    let (verbs, nouns): (Vec<&str>, Vec<&str>) = (
        VERBS.split_whitespace().collect(),
        NOUNS.split_whitespace().collect(),
    );
    let pairs = verbs.len() * nouns.len();
    // 7919 is prime and does not divide `pairs`: every pair once, in a scattered order.
    for i in 0..pairs {
        if out.len() == VOCABULARY {
            break;
        }
        let p = (i * 7919) % pairs;
        let word = format!("{}{}", verbs[p / nouns.len()], nouns[p % nouns.len()]);
        if seen.insert(word.clone()) {
            out.push(word);
        }
    }
    assert_eq!(out.len(), VOCABULARY, "vocabulary too small");
    out
}

/// The file path pool: a directory and a file named after a vocabulary word.
fn paths(vocab: &[String]) -> Vec<String> {
    let stems = &vocab[STOP_WORDS.split_whitespace().count()..];
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(PATHS);
    let mut i = 0usize;
    while out.len() < PATHS {
        let (dir, ext) = DIRS[i % DIRS.len()];
        let stem = stems[(i / DIRS.len() * 31 + i) % stems.len()].to_lowercase();
        let path = format!("{dir}/{stem}.{ext}");
        if seen.insert(path.clone()) {
            out.push(path);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_and_queries_are_fixed() {
        let vocab = vocabulary();
        assert_eq!(vocab.len(), VOCABULARY);
        assert_eq!(vocab[0], "the");
        assert_eq!(paths(&vocab).len(), PATHS);
        let q = queries(&vocab, 4, 50);
        assert_eq!(q.len(), 50);
        assert!(q.iter().all(|q| q.text.split(' ').count() == 4));
        assert_eq!(q[7].text, queries(&vocab, 4, 50)[7].text);
    }
}
