//! embed_throughput: what embeddings cost. Three figures:
//!
//! 1. **Throughput** of the local model (all-MiniLM-L6-v2 on the CPU, from
//!    `--model-dir`), in texts per second of wall time and CPU ms per text:
//!    short queries one at a time; observation-sized texts (~520
//!    characters: a title, three facts, a narrative) one at a time and in
//!    batches of 32, `--texts` texts each; long texts (an observation three
//!    times, ~1,800 characters: two windows of the model's 256 tokens, both
//!    read, as a stored memory is) in batches of 32.
//! 2. **Memory**: this process's resident set (VmRSS) before the model is
//!    loaded, once loaded, and its peak (VmHWM) after the batches: what
//!    loading the embedder adds to a generator or API process.
//! 3. **Search latency** on a project of `--observations` (100,000)
//!    embedded observations: a fresh database and the real API in-process
//!    (`cairn_testkit::spawn_app`, embeddings on), the observations and
//!    their 384-float vectors inserted by SQL (`generate_series`, random
//!    unit-free vectors: the cost of a vector search depends on how many
//!    vectors it compares, not on their values), then `--queries` (50)
//!    sequential `GET /v1/search` per mode (`fulltext`, `vector`,
//!    `hybrid`, and `vector` with a type filter), p50/p99/max in ms. The
//!    query embedding is part of each vector and hybrid request.
//!
//! Prints `key=value` lines. Run with the model fetched
//! (`scripts/fetch-model.sh`), Postgres and Redis up.

use std::{path::PathBuf, time::Instant};

use cairn_bench::quantile;
use cairn_embed::Embedder;
use clap::Parser;

#[derive(Parser)]
struct Args {
    #[arg(long, env = "CAIRN_EMBED_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Texts per throughput run.
    #[arg(long, default_value_t = 128)]
    texts: usize,
    /// Embedded observations in the search project.
    #[arg(long, default_value_t = 100_000)]
    observations: i64,
    /// Searches per mode.
    #[arg(long, default_value_t = 50)]
    queries: usize,
    /// Skip the search part.
    #[arg(long)]
    no_search: bool,
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

const WORDS: [&str; 24] = [
    "parser",
    "linker",
    "cache",
    "migration",
    "token",
    "session",
    "build",
    "index",
    "query",
    "panic",
    "memory",
    "deadline",
    "retry",
    "budget",
    "schema",
    "worker",
    "lease",
    "summary",
    "redis",
    "postgres",
    "hook",
    "context",
    "search",
    "vector",
];

/// An observation-sized text (~600 characters), different for each `i`.
fn observation(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    format!(
        "Fixed the {} {} when the {} was empty\n\
         The {} now checks the {} before it reads the {}.\n\
         A {} of zero no longer makes the {} retry forever.\n\
         Tests cover the empty {} and the full {}.\n\
         The {} failed on every run where the {} held no rows: it indexed past the end of the {} \
         and panicked, which the {} reported as a {} error. It now returns early with an empty {}, \
         and the {} logs the case once, so a {} with no {} is no longer a crash but a quiet no-op.",
        w(0),
        w(1),
        w(2),
        w(3),
        w(4),
        w(5),
        w(6),
        w(7),
        w(8),
        w(9),
        w(10),
        w(11),
        w(12),
        w(13),
        w(14),
        w(15),
        w(16),
        w(17),
        w(18)
    )
}

/// CPU time (user + system) this process has used, in ms: unlike wall time,
/// it does not grow when other work on the machine takes the cores.
fn cpu_ms() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // Safety: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// Texts per second of wall time, and CPU ms per text.
async fn throughput(embedder: &Embedder, texts: &[String], batch: usize) -> (f64, f64) {
    // One warm-up batch.
    embedder
        .embed(texts[..batch.min(texts.len())].to_vec())
        .await
        .unwrap();
    let (started, cpu) = (Instant::now(), cpu_ms());
    for chunk in texts.chunks(batch) {
        embedder.embed(chunk.to_vec()).await.unwrap();
    }
    let n = texts.len() as f64;
    (n / started.elapsed().as_secs_f64(), (cpu_ms() - cpu) / n)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let dir = args.model_dir.clone().unwrap_or_else(|| {
        PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/cairn/models/all-minilm-l6-v2")
    });
    let rss_before = status_kb("VmRSS:");
    let started = Instant::now();
    let precision = cairn_embed::EmbedConfig::from_env().precision;
    let embedder = Embedder::local_with(&dir, precision)?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let rss_loaded = status_kb("VmRSS:");
    println!(
        "model=all-MiniLM-L6-v2 precision={} (where the CPU runs it) load_ms={load_ms:.0} threads={}",
        precision.as_str(),
        std::thread::available_parallelism()?
    );

    let texts: Vec<String> = (0..args.texts).map(observation).collect();
    let chars = texts.iter().map(|t| t.chars().count()).sum::<usize>() / texts.len();
    let queries: Vec<String> = (0..32)
        .map(|i| format!("why did the {} fail", WORDS[i % WORDS.len()]))
        .collect();
    let (q_rate, q_cpu) = throughput(&embedder, &queries, 1).await;
    println!(
        "throughput kind=query text_chars=24 batch=1 texts_per_s={q_rate:.1} cpu_ms_per_text={q_cpu:.1}"
    );
    let (one, one_cpu) = throughput(&embedder, &texts[..args.texts.min(64)], 1).await;
    let (batched, batched_cpu) = throughput(&embedder, &texts, 32).await;
    println!(
        "throughput kind=observation text_chars={chars} batch=1 texts_per_s={one:.1} cpu_ms_per_text={one_cpu:.1}"
    );
    println!(
        "throughput kind=observation text_chars={chars} batch=32 texts_per_s={batched:.1} cpu_ms_per_text={batched_cpu:.1}"
    );
    let long: Vec<String> = (0..64).map(|i| observation(i).repeat(3)).collect();
    let (long_rate, long_cpu) = throughput(&embedder, &long, 32).await;
    println!(
        "throughput kind=long text_chars={} (read in windows of 256 tokens) batch=32 texts_per_s={long_rate:.1} cpu_ms_per_text={long_cpu:.1}",
        long[0].chars().count()
    );
    let rss_peak = status_kb("VmHWM:");
    println!(
        "memory rss_before_mb={:.0} rss_loaded_mb={:.0} added_by_model_mb={:.0} peak_after_batches_mb={:.0}",
        rss_before as f64 / 1024.0,
        rss_loaded as f64 / 1024.0,
        (rss_loaded.saturating_sub(rss_before)) as f64 / 1024.0,
        rss_peak as f64 / 1024.0
    );
    if args.no_search {
        return Ok(());
    }
    search_latency(&args, &dir).await
}

async fn search_latency(args: &Args, dir: &std::path::Path) -> anyhow::Result<()> {
    let app = cairn_testkit::spawn_app_with(cairn_testkit::Options {
        extra: vec![
            ("CAIRN_EMBED_PROVIDER", "local".into()),
            ("CAIRN_EMBED_MODEL_DIR", dir.display().to_string()),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "8".into()),
        ],
        ..Default::default()
    })
    .await;
    let started = Instant::now();
    let kinds = "ARRAY['discovery','change','bugfix','feature','decision','refactor']";
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative, created_at, updated_at)
         SELECT gen_random_uuid(), $1, $2, 'bench:' || g, ({kinds})[1 + g % 6],
                'Observation ' || g || ' about the ' || (ARRAY['parser','linker','cache','migration','worker'])[1 + g % 5],
                'Narrative of observation ' || g || ': the build, the tests and the fix.',
                now() - (($3 - g) || ' minutes')::interval, now() - (($3 - g) || ' minutes')::interval
         FROM generate_series(1, $3) g"
    )))
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(args.observations)
    .execute(&app.pool)
    .await?;
    sqlx::query(
        "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
         SELECT o.id, o.project_id, 'all-MiniLM-L6-v2', 384,
                ARRAY(SELECT (random() - 0.5)::real FROM generate_series(1, 384) WHERE o.id IS NOT NULL)
         FROM observations o WHERE o.project_id = $1",
    )
    .bind(app.project_id)
    .execute(&app.pool)
    .await?;
    sqlx::query("VACUUM ANALYZE").execute(&app.pool).await?;
    println!(
        "corpus observations={} embedded={} seed_s={:.0}",
        args.observations,
        args.observations,
        started.elapsed().as_secs_f64()
    );
    let questions = [
        "why did the nightly build fail",
        "how do migrations run with several replicas",
        "what broke the cache",
        "parser panic on empty input",
        "which worker holds the lease",
    ];
    for (name, extra) in [
        ("fulltext", "mode=fulltext"),
        ("vector", "mode=vector"),
        ("hybrid", "mode=hybrid"),
        ("vector_type_filter", "mode=vector&type=bugfix"),
    ] {
        let mut ms = Vec::with_capacity(args.queries);
        let mut cpu = 0.0;
        for i in 0..args.queries + 3 {
            let q = questions[i % questions.len()].replace(' ', "%20");
            let (t, c) = (Instant::now(), cpu_ms());
            let (status, body) = app
                .get(
                    &format!(
                        "/v1/search?projectId={}&query={q}&{extra}&limit=20",
                        app.project_id
                    ),
                    Some(&app.admin_token),
                )
                .await;
            anyhow::ensure!(status == 200, "{name}: {status} {body}");
            if i >= 3 {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                cpu += cpu_ms() - c;
            }
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "search mode={name} observations={} p50_ms={:.1} p99_ms={:.1} max_ms={:.1} api_cpu_ms_per_search={:.1}",
            args.observations,
            quantile(&ms, 0.5),
            quantile(&ms, 0.99),
            ms.last().copied().unwrap_or_default(),
            cpu / args.queries as f64
        );
    }
    let (pool, url) = (app.pool.clone(), app.database_url.clone());
    drop(app);
    cairn_bench::drop_database(&pool, &url).await
}
