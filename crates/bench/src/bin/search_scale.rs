//! search_scale: the retrieval engine (`cairn_retrieval`) at scale, through
//! the real API: index build time and size, search latency per query shape
//! and mode, recall of old facts, and how fast a new memory is found.
//!
//! 1. **Corpus.** A fresh database (`cairn_testkit`), 10 projects (the
//!    bootstrap one, the "big" project, and 9 more), `--total` memories
//!    (1,000,000; `--quick`: 100,000) spread evenly, so every project holds
//!    `total / 10`. Rows go in by multi-row `INSERT … SELECT FROM unnest(…)`
//!    in batches of `--batch` (5,000) on 2 connections, observations and
//!    their vectors in one transaction; created over the last 360 days.
//!    Text is built from ~35 sentence templates filled from a vocabulary of
//!    ~330 coding words, ~2,900 camelCase identifiers, ~900 snake_case
//!    fields, ~650 type names, 3,000 file paths, ~450 error codes, 60
//!    libraries and versions: the title is one of `--pool` (2,000) distinct
//!    sentences, the subtitle, facts and narrative are filled afresh for
//!    every memory. **Vectors are synthetic**: the pool's 2,000 titles are
//!    embedded once with the local model, and every memory gets its
//!    title's vector plus uniform noise of norm `--noise` (0.3; cosine ≈ 0.96
//!    to the title's), re-normalised. 50 "needles", each a specific fact,
//!    are the big project's oldest memories (a year old), embedded for real.
//! 2. **Build.** A fresh `Engine` over the seeded database: `index_all()`
//!    time, `stats()`, this process's RSS before and after; then the
//!    engine's own search cost in-process (no HTTP, no query embedding).
//! 3. **API.** The API restarted over the seeded database (its index built
//!    from Postgres as on a real start), one warm-up search per project.
//! 4. **Latency.** `--queries` (2,000) searches per mode (default = hybrid,
//!    fulltext, vector), a quarter each of 1, 2 and 4 words and full
//!    sentences, every text different (across modes too: the query-vector
//!    cache never helps), spread over the 10 projects, at `--concurrency`
//!    (8), `limit=5`.
//! 5. **Recall.** The needles' 50 questions in the big project: recall@5
//!    and MRR@5 per mode.
//! 6. **Freshness.** 20 times: `POST /v1/memories` with a unique word, then
//!    search for that word until the memory is a hit.
//!
//! Prints markdown tables (progress on stderr). No timing is asserted.

use std::{
    collections::HashSet,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use cairn_bench::{
    corpus::{Batch, Corpus, DIMS, QUESTIONS, Rng, TEMPLATES, Vocab, insert_batch, seed_corpus},
    drop_database, quantile,
};
use cairn_embed::Embedder;
use cairn_retrieval::{Engine, Filters, Mode as EngineMode, Query};
use cairn_testkit::{Options, TestApp, spawn_app_with};
use chrono::Utc;
use clap::Parser;
use serde_json::{Value, json};
use sqlx::{PgPool, postgres::PgPoolOptions};
use tokio::task::JoinSet;
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Memories in all projects together, needles included.
    #[arg(long, default_value_t = 1_000_000)]
    total: usize,
    /// 100,000 memories in total (overrides --total).
    #[arg(long)]
    quick: bool,
    /// Projects, the big one included; each holds total / projects.
    #[arg(long, default_value_t = 10)]
    projects: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 5_000)]
    batch: usize,
    /// Distinct title sentences, each embedded once.
    #[arg(long, default_value_t = 2_000)]
    pool: usize,
    /// Norm of the noise added to a title's vector.
    #[arg(long, default_value_t = 0.3)]
    noise: f32,
    /// Searches per mode in the latency runs.
    #[arg(long, default_value_t = 2_000)]
    queries: usize,
    /// Concurrent searches.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Freshness probes.
    #[arg(long, default_value_t = 20)]
    fresh: usize,
    /// CAIRN_DATABASE_MAX_CONNECTIONS of the API (production default 32).
    #[arg(long, default_value_t = 32)]
    db_connections: u32,
    /// Leave the database for the caller to drop.
    #[arg(long)]
    keep_db: bool,
}

const NEEDLES: usize = 50;
const SHAPES: [&str; 4] = ["1 word", "2 words", "4 words", "sentence"];
const LIMIT: usize = 5;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = Args::parse();
    if args.quick {
        args.total = 100_000;
    }
    anyhow::ensure!(
        args.projects >= 1 && args.total / args.projects > NEEDLES,
        "--total too small"
    );
    let model_dir = cairn_embed::model_dir();
    anyhow::ensure!(
        model_dir.join("model.safetensors").is_file(),
        "no embedding model in {} (scripts/fetch-model.sh)",
        model_dir.display()
    );
    // The first API only takes the seed: its index polls the feed once an hour,
    // so following a million inserts does not compete with them; the API the
    // bench measures is started afterwards over the seeded database.
    let mut app = spawn_app_with(Options {
        extra: vec![
            ("CAIRN_EMBED_PROVIDER", "local".into()),
            ("CAIRN_EMBED_MODEL_DIR", model_dir.display().to_string()),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", args.db_connections.to_string()),
            ("CAIRN_INDEX_POLL_MS", "3600000".into()),
        ],
        ..Options::default()
    })
    .await;
    eprintln!("database {}", app.database_url);
    let result = run(&args, &mut app, &model_dir).await;
    if args.keep_db {
        println!("\ndatabase kept: {}", app.database_url);
        app.pool.close().await;
        result
    } else {
        let dropped = drop_database(&app.pool, &app.database_url).await;
        result.and(dropped)
    }
}

async fn run(args: &Args, app: &mut TestApp, model_dir: &std::path::Path) -> anyhow::Result<()> {
    let embedder = Embedder::local(model_dir)?;
    let model = embedder.model().to_string();
    let vocab = Vocab::new();
    // Every single-word query is a different word: three modes' quarters.
    let singles = vocab.single_words().len();
    if 3 * args.queries.div_ceil(SHAPES.len()) > singles {
        bail!(
            "--queries {} needs {} distinct single words; the vocabulary has {singles} (use at most {})",
            args.queries,
            3 * args.queries.div_ceil(SHAPES.len()),
            singles / 3 * SHAPES.len()
        );
    }
    let mut projects = vec![app.project_id];
    for i in 1..args.projects {
        projects.push(app.create_project(&format!("scale-{i:02}")).await);
    }
    let big = app.project_id;

    println!("# search_scale\n");
    println!(
        "{} memories in {} projects ({} each; the big project {big} holds the {NEEDLES} needles, its oldest).  ",
        args.total,
        args.projects,
        args.total / args.projects
    );
    println!(
        "Vocabulary: {} words, {} identifiers, {} fields, {} types, {} paths, {} error codes, {} libraries; {} templates.  ",
        vocab.words.len(),
        vocab.idents.len(),
        vocab.fields.len(),
        vocab.types.len(),
        vocab.paths.len(),
        vocab.errors.len(),
        vocab.libs.len(),
        TEMPLATES.len()
    );
    println!(
        "Vectors: SYNTHETIC for the corpus: {} distinct title sentences embedded once with {model}; each memory has \
         its title's vector + uniform noise of norm {} (re-normalised). Needles and all queries are embedded for real.\n",
        args.pool, args.noise
    );

    // ---- 1. seed
    let seed_pool = PgPoolOptions::new()
        .max_connections(3)
        .connect(&app.database_url)
        .await?;
    let t = Instant::now();
    let pool_texts = vocab.pool_texts(args.pool);
    let mut pool_vectors = Vec::with_capacity(pool_texts.len());
    for chunk in pool_texts.chunks(64) {
        pool_vectors.extend(embedder.embed(chunk.to_vec()).await?);
    }
    let pool_embed_s = t.elapsed().as_secs_f64();
    eprintln!("embedded {} pool texts in {pool_embed_s:.1} s", pool_texts.len());

    let needles = needles();
    let needle_ids = seed_needles(&seed_pool, app, &embedder, &needles).await?;
    let t = Instant::now();
    let corpus = Arc::new(Corpus {
        vocab: vocab.clone(),
        titles: pool_texts,
        vectors: pool_vectors,
        projects: projects.clone(),
        team: app.team_id,
        model: model.clone(),
        noise: args.noise,
        own: None,
        n: args.total - NEEDLES,
        first: 0,
        t0: Utc::now(),
        span_days: 360.0,
    });
    seed_corpus(&seed_pool, corpus.clone(), args.batch).await?;
    let seed_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    sqlx::raw_sql("VACUUM ANALYZE observations, observation_embeddings")
        .execute(&seed_pool)
        .await?;
    let vacuum_s = t.elapsed().as_secs_f64();
    let (rows, vectors, db_mb): (i64, i64, f64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM observations), (SELECT count(*) FROM observation_embeddings),
                pg_database_size(current_database()) / 1048576.0::float8",
    )
    .fetch_one(&seed_pool)
    .await?;
    seed_pool.close().await;

    println!("## Seed\n");
    println!("| what | value |\n|---|---|");
    println!("| observations / vectors | {rows} / {vectors} |");
    println!(
        "| pool texts embedded | {} in {pool_embed_s:.1} s |",
        corpus.titles.len()
    );
    println!(
        "| bulk insert (unnest, {} rows/batch, 2 connections) | {seed_s:.1} s ({:.0} rows/s) |",
        args.batch,
        rows as f64 / seed_s
    );
    println!("| VACUUM ANALYZE | {vacuum_s:.1} s |");
    println!("| database size | {db_mb:.0} MB |\n");

    // ---- 2. index build on a fresh engine
    let rss_before = rss_kb();
    let engine = Engine::new(
        app.pool.clone(),
        cairn_retrieval::Config {
            model: Some(model.clone()),
            ..Default::default()
        },
    );
    let t = Instant::now();
    let indexed = engine.index_all().await?;
    let build_s = t.elapsed().as_secs_f64();
    let stats = engine.stats();
    let rss_after = rss_kb();
    println!("## Index build (fresh Engine, `index_all()`)\n");
    println!("| what | value |\n|---|---|");
    println!("| projects | {indexed} |");
    println!("| box | {} (when the build ended) |", load());
    println!(
        "| build time | {build_s:.1} s ({:.0} memories/s) |",
        stats.memories as f64 / build_s
    );
    println!(
        "| stats | memories {} · vectors {} · bytes {} ({:.0} MB, {:.0} B/memory) · refused {} |",
        stats.memories,
        stats.vectors,
        stats.bytes,
        stats.bytes as f64 / 1048576.0,
        stats.bytes as f64 / stats.memories.max(1) as f64,
        stats.refused
    );
    println!(
        "| process RSS before → after | {:.0} MB → {:.0} MB (+{:.0} MB; peak {:.0} MB) |\n",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after as f64 - rss_before as f64) / 1024.0,
        hwm_kb() as f64 / 1024.0
    );

    let mut queries = QuerySets::new(&vocab, args.queries, args.projects);
    engine_only(&engine, &corpus, &mut queries, big).await?;
    drop(engine);
    let rss_dropped = rss_kb();

    // ---- 3. the API over the seeded database
    app.env.insert("CAIRN_INDEX_POLL_MS".into(), "500".into());
    let t = Instant::now();
    let api_app = app.restart().await;
    let api = Arc::new(Api::new(&api_app, args.concurrency)?);
    let mut warm = Vec::new();
    for (i, p) in projects.iter().enumerate() {
        let text = queries.take_warmup();
        let s = Instant::now();
        api.search(*p, &text, None).await?;
        warm.push(format!(
            "{}: {:.0} ms",
            if i == 0 { "big" } else { "p" },
            s.elapsed().as_secs_f64() * 1000.0
        ));
    }
    let warm_s = t.elapsed().as_secs_f64();
    let rss_api = rss_kb();
    println!("## API restart over the seeded database\n");
    println!("| what | value |\n|---|---|");
    println!("| restart → one warm-up search per project answered | {warm_s:.1} s |");
    println!("| warm-up searches (in order) | {} |", warm.join(", "));
    println!(
        "| RSS after dropping the bench's engine → with the API's index | {:.0} MB → {:.0} MB |\n",
        rss_dropped as f64 / 1024.0,
        rss_api as f64 / 1024.0
    );

    // Query embedding alone, for scale (distinct texts, the model in this process).
    let mut embed_ms = Vec::new();
    for _ in 0..30 {
        let text = queries.take_warmup();
        let s = Instant::now();
        embedder.embed_query(&text).await?;
        embed_ms.push(s.elapsed().as_secs_f64() * 1000.0);
    }
    embed_ms.sort_by(f64::total_cmp);

    // ---- 4. latency through the API
    println!(
        "## Search latency through the API (`GET /v1/search`, limit={LIMIT}, concurrency {}, {} distinct queries per mode over {} projects)\n",
        args.concurrency, args.queries, args.projects
    );
    println!(
        "One query embedding alone (local model, sequential, no other bench load): p50 {:.1} ms, max {:.1} ms ({}).\n",
        quantile(&embed_ms, 0.5),
        quantile(&embed_ms, 1.0),
        load()
    );
    println!("| mode | shape | queries | p50 ms | p95 ms | p99 ms | max ms | mean hits | queries/s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for mode in [None, Some("fulltext"), Some("vector")] {
        let set = queries.take_run(&projects);
        let run = drive(&api, set, mode, args.concurrency).await?;
        run.print(mode.unwrap_or("default (hybrid)"));
    }
    println!();

    // ---- 5. recall of the needles
    println!("## Recall of the {NEEDLES} needles (big project, oldest memories, limit={LIMIT})\n");
    println!("| mode | recall@5 | MRR@5 | missed (needle numbers) |\n|---|---|---|---|");
    for mode in [None, Some("fulltext"), Some("vector")] {
        let mut found = 0;
        let mut rr = 0.0;
        let mut missed = Vec::new();
        for (i, (needle, id)) in needles.iter().zip(&needle_ids).enumerate() {
            let hits = api.search(big, needle.1, mode).await?;
            match hits.iter().position(|h| h == id) {
                Some(rank) => {
                    found += 1;
                    rr += 1.0 / (rank + 1) as f64;
                }
                None => missed.push((i + 1).to_string()),
            }
        }
        println!(
            "| {} | {:.2} ({found}/{NEEDLES}) | {:.3} | {} |",
            mode.unwrap_or("default (hybrid)"),
            found as f64 / NEEDLES as f64,
            rr / NEEDLES as f64,
            if missed.is_empty() {
                "none".to_string()
            } else {
                missed.join(" ")
            }
        );
    }
    println!();

    // ---- 6. freshness
    freshness(&api, &api_app, args.fresh, &vocab).await?;
    Ok(())
}

/// 50 specific facts and a question each whose answer only that fact holds.
fn needles() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "The nightly invoice export to Snowflake broke because the FINANCE_RO role lost USAGE on schema billing_v2; fixed by re-granting it in grants/finance.sql.",
            "why did the nightly invoice export to snowflake break",
        ),
        (
            "Safari 16 drops the session cookie on the OAuth redirect because SameSite=Strict was set on cairn_sid; switched it to Lax.",
            "why do safari users lose their login after the oauth redirect",
        ),
        (
            "The PDF renderer runs out of memory on reports over 400 pages; wkhtmltopdf is now called with --disable-smart-shrinking and pages are streamed in chunks of 50.",
            "how do we avoid running out of memory when rendering big pdf reports",
        ),
        (
            "Staging uses the Mailpit SMTP sink on port 1025, so no real email leaves staging; production uses Postmark.",
            "which smtp server does staging send email through",
        ),
        (
            "Timezone bug: the weekly digest went out on Sunday for Australian teams because cron ran in UTC; digests are now scheduled per team in its own zone with chrono-tz.",
            "why did australian teams get the weekly digest on the wrong day",
        ),
        (
            "The Stripe webhook secret rotates every 90 days; the current one lives in Vault at secret/payments/stripe_whsec.",
            "where is the stripe webhook signing secret stored",
        ),
        (
            "Android builds failed with Duplicate class kotlin.collections.jdk8 until kotlin-stdlib-jdk8 was excluded from the Firebase BOM.",
            "how was the duplicate kotlin class error in the android build fixed",
        ),
        (
            "The geocoder returns swapped coordinates for addresses in Iceland: Nominatim gives lon,lat there; normalise_latlon() in geo/iceland.py flips them.",
            "why are map pins in iceland in the wrong place",
        ),
        (
            "Elasticsearch reindex of the product catalog takes 3 hours; use the alias catalog_live and swap it atomically instead of reindexing in place.",
            "how should the product catalog search index be rebuilt without downtime",
        ),
        (
            "Our S3 bucket cairn-artifacts-eu has object lock in compliance mode for 30 days, so deleting build artifacts earlier always fails with AccessDenied.",
            "why can't we delete old build artifacts from the eu bucket",
        ),
        (
            "The CSV importer chokes on Excel files saved as UTF-16 LE with BOM; the importer now sniffs the BOM and transcodes with encoding_rs.",
            "spreadsheet import fails on files exported from excel",
        ),
        (
            "Feature flag new_checkout_flow is owned by the growth team and must stay off for enterprise tenants until the SOC2 audit ends in March.",
            "who owns the new checkout flow flag and when can enterprise customers get it",
        ),
        (
            "GraphQL query depth is capped at 7 after a customer's nested friendsOfFriends query took down the gateway.",
            "what is the maximum graphql query depth and why",
        ),
        (
            "The iOS app's push notifications stopped because the APNs auth key AuthKey_8XK2 expired with the Apple developer membership; a new .p8 key was uploaded.",
            "why did ios push notifications stop arriving",
        ),
        (
            "Flaky test test_refund_partial depends on wall-clock rounding at midnight; freezegun now pins the time to noon.",
            "why does the partial refund test fail sometimes around midnight",
        ),
        (
            "The Kafka consumer group ledger-sync lags because max.poll.records was 5000 and each batch exceeded max.poll.interval.ms; lowered it to 500.",
            "why does the ledger sync consumer keep getting rebalanced",
        ),
        (
            "Brotli compression is disabled on /api/export because Cloudflare double-compressed the stream and clients saw garbage.",
            "why is compression turned off on the export endpoint",
        ),
        (
            "Terraform state for the data platform lives in the bucket tf-state-dataplat with the DynamoDB locking table tf-locks-dataplat.",
            "where is the terraform state of the data platform kept",
        ),
        (
            "The search box ignored accents because the Postgres collation was C; the unaccent extension now wraps both the index and the query.",
            "why does searching for cafe not find café",
        ),
        (
            "The memory leak in the websocket gateway came from listeners never removed in presenceChannel.on('leave'); fixed by calling off() in the disconnect handler.",
            "what caused the memory leak in the websocket gateway",
        ),
        (
            "The Redis eviction policy of the rate limiter instance must be noeviction; with allkeys-lru the limiter silently reset counters under memory pressure.",
            "which redis eviction policy does the rate limiter need",
        ),
        (
            "Password reset links expire after 45 minutes, set by RESET_TOKEN_TTL in auth/settings.py, as agreed with security in ticket SEC-482.",
            "how long are password reset links valid",
        ),
        (
            "The mobile team pins React Native to 0.72.6 because Hermes in 0.73 crashes on our Intl.DateTimeFormat polyfill.",
            "why can't we upgrade react native past 0.72",
        ),
        (
            "Invoices with more than 999 line items broke the PDF table layout; the template now paginates line items every 40 rows.",
            "invoice layout broken with many line items",
        ),
        (
            "Uploading files above 2 GB failed because nginx client_max_body_size was 2g; uploads now go straight to S3 with multipart presigned URLs.",
            "how do we handle uploads larger than two gigabytes",
        ),
        (
            "The Zendesk integration uses API token auth with the agent account support-bot; OAuth was dropped because its refresh tokens expired weekly.",
            "how does the zendesk integration authenticate",
        ),
        (
            "Dark mode colours come from design/tokens.json; never hard-code hex values in components, the lint rule no-raw-colors enforces it.",
            "where do the dark mode colours come from",
        ),
        (
            "Read replica lag spiked to 40 seconds during the nightly VACUUM FULL of audit_log; replaced it with pg_repack at 03:00.",
            "what caused the replica lag spikes at night",
        ),
        (
            "Sentry was dropping events because the sample rate was 0.01 in production.yaml; errors are now sampled at 1.0 and traces at 0.05.",
            "why were errors missing from sentry",
        ),
        (
            "Customer Acme Logistics is on a custom contract with a 99.95% uptime SLA and a dedicated cluster eu-acme-1.",
            "what sla does acme logistics have",
        ),
        (
            "The Go service inventoryd must be built with CGO_ENABLED=0 or the Alpine image fails with no such file or directory for the binary.",
            "inventoryd binary not found in the alpine container",
        ),
        (
            "Translations are managed in Crowdin; the sync job runs on merges to main and opens a PR named chore(i18n): crowdin sync.",
            "how are translations synced",
        ),
        (
            "Login throttling allows 5 failed attempts per 15 minutes per account and 50 per IP address, with a sliding window in auth/throttle.rs.",
            "how many failed login attempts before an account is throttled",
        ),
        (
            "Videos uploaded from iPhones appeared rotated because ffmpeg ignored the rotation metadata; we now pass -metadata:s:v rotate=0 after autorotate.",
            "why are iphone videos sideways after upload",
        ),
        (
            "The GDPR deletion job must also purge rows in analytics.events_raw, which has no foreign key to users; purge_user() handles it explicitly.",
            "what else must be removed when deleting a user for gdpr",
        ),
        (
            "Builds on the M1 runners failed linking libpq until PQ_LIB_DIR=/opt/homebrew/opt/libpq/lib was set in the runner environment.",
            "how to fix linking libpq on apple silicon ci runners",
        ),
        (
            "Daylight saving broke the billing cycle: subscriptions renewing at 02:30 local time skipped a day in March; renewals are computed in UTC now.",
            "why did some subscriptions skip a renewal in march",
        ),
        (
            "The docs site is built with Docusaurus and deployed by Netlify from the docs/ folder, with a preview on every pull request.",
            "how is the documentation site deployed",
        ),
        (
            "Twilio SMS to Germany needs a registered alphanumeric sender ID; unregistered sends were filtered as spam by Vodafone.",
            "why are sms messages not delivered in germany",
        ),
        (
            "gRPC calls between billing and ledger time out after 30 s because the Envoy route timeout overrides the client deadline; the route timeout is 0 now.",
            "why do grpc calls between billing and ledger time out at thirty seconds",
        ),
        (
            "The legacy SOAP endpoint of Contoso Freight needs a WS-Security UsernameToken with a nonce; their gateway rejects digest passwords.",
            "how do we authenticate to the contoso freight soap api",
        ),
        (
            "Image thumbnails are made by a Lambda with sharp; it needs the linux-x64 build of sharp packaged, not the darwin one.",
            "thumbnail lambda crashes with sharp module error",
        ),
        (
            "The monorepo uses Turborepo remote caching on Vercel; without TURBO_TEAM and TURBO_TOKEN builds are uncached and take 25 minutes.",
            "why are monorepo builds so slow without cache",
        ),
        (
            "Our OpenAPI client is generated with openapi-generator 6.6; version 7 changed enum naming and broke the TypeScript SDK.",
            "which openapi generator version do we use for the sdk",
        ),
        (
            "The HR integration with Personio syncs employees every 6 hours; terminated employees are deactivated, never deleted, for audit reasons.",
            "what happens to employees who leave in the personio sync",
        ),
        (
            "Chrome autofill overwrote the IBAN field because it was named account_number; renamed it to iban with autocomplete=off.",
            "why does the browser autofill the bank account field",
        ),
        (
            "Load tests showed the checkout API tops out at 1,800 requests per second on 4 pods, CPU-bound in JSON schema validation.",
            "what is the throughput limit of the checkout api",
        ),
        (
            "The Jira automation closes tickets labelled wontfix after 14 days of inactivity; the rule is owned by the platform team.",
            "why are jira tickets closed automatically",
        ),
        (
            "The Airflow DAG revenue_daily must run after the Salesforce export lands; it waits on an S3KeySensor for sf_export/_SUCCESS.",
            "what does the daily revenue dag wait for",
        ),
        (
            "Customer-uploaded SVGs are sanitised with DOMPurify on the server through jsdom, because inline SVG can carry scripts.",
            "how are uploaded svg files made safe",
        ),
    ]
}

/// The needles, the big project's oldest memories, embedded for real; their ids.
async fn seed_needles(
    pool: &PgPool,
    app: &TestApp,
    embedder: &Embedder,
    needles: &[(&str, &str)],
) -> anyhow::Result<Vec<Uuid>> {
    let year_ago = Utc::now() - chrono::Duration::days(365);
    let mut b = Batch::default();
    let mut texts = Vec::new();
    for (i, (fact, _)) in needles.iter().enumerate() {
        let title: String = match fact.find(';') {
            Some(cut) if cut < 100 => fact[..cut].to_string(),
            _ => fact.chars().take(80).collect(),
        };
        texts.push(cairn_generator::embed::observation_text(&title, "", &[], fact));
        b.ids.push(Uuid::now_v7());
        b.projects.push(app.project_id);
        b.kinds.push("discovery".into());
        b.titles.push(title);
        b.subtitles.push(String::new());
        b.facts.push(String::new());
        b.narratives.push(fact.to_string());
        b.concepts.push("gotcha".into());
        b.files_read.push(String::new());
        b.files_modified.push(String::new());
        b.created.push(year_ago + chrono::Duration::minutes(i as i64));
    }
    for v in embedder.embed(texts).await? {
        b.vectors.extend(v);
    }
    let ids = b.ids.clone();
    insert_batch(pool, app.team_id, embedder.model(), b).await?;
    Ok(ids)
}

// ---------------------------------------------------------------- queries

/// Every query text of the run, each used once.
struct QuerySets {
    rng: Rng,
    vocab: Vocab,
    singles: Vec<String>,
    used: HashSet<String>,
    per_mode: usize,
    projects: usize,
}

struct Search {
    shape: usize,
    project: Uuid,
    text: String,
}

impl QuerySets {
    fn new(vocab: &Vocab, per_mode: usize, projects: usize) -> Self {
        let mut rng = Rng(99);
        let mut singles = vocab.single_words();
        // Fisher–Yates, then drawn from the end.
        for i in (1..singles.len()).rev() {
            singles.swap(i, rng.below(i + 1));
        }
        Self {
            rng,
            vocab: vocab.clone(),
            singles,
            used: HashSet::new(),
            per_mode,
            projects,
        }
    }

    fn fresh(&mut self, make: impl Fn(&mut Rng, &Vocab) -> String) -> String {
        loop {
            let text = make(&mut self.rng, &self.vocab);
            if self.used.insert(text.clone()) {
                return text;
            }
        }
    }

    fn one(&mut self, shape: usize) -> String {
        match shape {
            0 => loop {
                let w = self.singles.pop().expect("single words left");
                if self.used.insert(w.clone()) {
                    return w;
                }
            },
            1 | 2 => {
                let n = if shape == 1 { 2 } else { 4 };
                self.fresh(|rng, v| (0..n).map(|_| v.any_word(rng)).collect::<Vec<_>>().join(" "))
            }
            _ => self.fresh(|rng, v| {
                let t = rng.pick(QUESTIONS);
                v.fill(t, rng)
            }),
        }
    }

    fn take_warmup(&mut self) -> String {
        self.one(3)
    }

    /// `per_mode` searches, a quarter of each shape, round robin over the projects, shuffled.
    fn take_run(&mut self, projects: &[Uuid]) -> Vec<Search> {
        let mut out: Vec<Search> = (0..self.per_mode)
            .map(|i| Search {
                shape: i % SHAPES.len(),
                project: projects[(i / SHAPES.len()) % self.projects],
                text: String::new(),
            })
            .collect();
        for s in &mut out {
            s.text = self.one(s.shape);
        }
        for i in (1..out.len()).rev() {
            let j = self.rng.below(i + 1);
            out.swap(i, j);
        }
        out
    }
}

// ---------------------------------------------------------------- engine in-process

/// The engine's own cost, no HTTP and no query embedding: the project's
/// in-memory search alone, and `Engine::search` (which first polls the feed).
async fn engine_only(
    engine: &Arc<Engine>,
    corpus: &Corpus,
    queries: &mut QuerySets,
    big: Uuid,
) -> anyhow::Result<()> {
    let index = engine.project(big).await?.context("big project refused")?;
    let filters = Filters::default();
    let mut rng = Rng(5);
    let amplitude = corpus.noise / (DIMS as f32).sqrt() * 3f32.sqrt();
    println!(
        "### The engine alone (big project, {} memories; sequential; want=6)\n",
        index.read().expect("lock").len()
    );
    println!("| arm | shape | queries | p50 ms | p95 ms | p99 ms | max ms | mean hits |");
    println!("|---|---|---|---|---|---|---|---|");
    let per_shape = 100;
    for (mode, label) in [
        (EngineMode::Lexical, "lexical (index only)"),
        (EngineMode::Semantic, "semantic (index only)"),
        (EngineMode::Hybrid, "hybrid (index only)"),
        (EngineMode::Hybrid, "hybrid via Engine::search (+ feed poll)"),
    ] {
        let via_engine = label.contains("Engine::search");
        let shapes = if mode == EngineMode::Semantic {
            1
        } else {
            SHAPES.len()
        };
        for (shape, shape_name) in SHAPES.iter().enumerate().take(shapes) {
            let mut ms = Vec::new();
            let mut hits = 0usize;
            for _ in 0..per_shape {
                let text = queries.one(shape);
                // A query vector near a random title (no model call here).
                let mut v: Vec<f32> = corpus.vectors[rng.below(corpus.vectors.len())]
                    .iter()
                    .map(|x| x + (rng.unit() * 2.0 - 1.0) * amplitude)
                    .collect();
                cairn_embed::normalise(&mut v);
                let q = Query {
                    project_id: big,
                    text: &text,
                    exclude: "",
                    vector: Some(&v),
                    filters: &filters,
                    as_of: Utc::now(),
                    summaries: true,
                    mode,
                    want: LIMIT + 1,
                    lexical_weight: None,
                };
                let t = Instant::now();
                let found = if via_engine {
                    engine.search(&q).await?.unwrap_or_default().len()
                } else {
                    index.read().expect("lock").search(&q).len()
                };
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
                hits += found;
            }
            ms.sort_by(f64::total_cmp);
            println!(
                "| {label} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} |",
                if mode == EngineMode::Semantic {
                    "vector near a title"
                } else {
                    shape_name
                },
                ms.len(),
                quantile(&ms, 0.5),
                quantile(&ms, 0.95),
                quantile(&ms, 0.99),
                quantile(&ms, 1.0),
                hits as f64 / per_shape as f64
            );
        }
    }
    println!();
    Ok(())
}

// ---------------------------------------------------------------- API

struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    fn new(app: &TestApp, concurrency: usize) -> anyhow::Result<Self> {
        Ok(Self {
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(concurrency)
                .timeout(Duration::from_secs(120))
                .build()?,
            base: app.base.clone(),
            token: app.admin_token.clone(),
        })
    }

    /// The ids of the hits, best first.
    async fn search(&self, project: Uuid, text: &str, mode: Option<&str>) -> anyhow::Result<Vec<Uuid>> {
        let project = project.to_string();
        let limit = LIMIT.to_string();
        let mut params = vec![("query", text), ("limit", &limit), ("project", &project)];
        if let Some(m) = mode {
            params.push(("mode", m));
        }
        let res = self
            .client
            .get(format!("{}/v1/search", self.base))
            .bearer_auth(&self.token)
            .query(&params)
            .send()
            .await?;
        let status = res.status();
        let body: Value = res.json().await?;
        if !status.is_success() {
            bail!("search {text:?}: {status} {body}");
        }
        Ok(body["results"]
            .as_array()
            .map(|hits| {
                hits.iter()
                    .filter_map(|h| {
                        let kind = h["type"].as_str()?;
                        h[kind]["id"].as_str()?.parse().ok()
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
}

struct Run {
    /// (shape, ms, hits)
    samples: Vec<(usize, f64, usize)>,
    wall_s: f64,
}

async fn drive(
    api: &Arc<Api>,
    set: Vec<Search>,
    mode: Option<&str>,
    concurrency: usize,
) -> anyhow::Result<Run> {
    let set = Arc::new(set);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for _ in 0..concurrency {
        let (api, set, next, mode) = (api.clone(), set.clone(), next.clone(), mode.map(str::to_string));
        tasks.spawn(async move {
            let mut samples = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(s) = set.get(i) else {
                    return anyhow::Ok(samples);
                };
                let t = Instant::now();
                let hits = api.search(s.project, &s.text, mode.as_deref()).await?;
                samples.push((s.shape, t.elapsed().as_secs_f64() * 1000.0, hits.len()));
            }
        });
    }
    let mut samples = Vec::new();
    while let Some(done) = tasks.join_next().await {
        samples.extend(done??);
    }
    Ok(Run {
        samples,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

impl Run {
    fn print(&self, mode: &str) {
        let row = |shape: &str, filter: &dyn Fn(usize) -> bool, qps: String| {
            let picked: Vec<&(usize, f64, usize)> = self.samples.iter().filter(|s| filter(s.0)).collect();
            let mut ms: Vec<f64> = picked.iter().map(|s| s.1).collect();
            ms.sort_by(f64::total_cmp);
            let hits: usize = picked.iter().map(|s| s.2).sum();
            println!(
                "| {mode} | {shape} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {qps} |",
                ms.len(),
                quantile(&ms, 0.5),
                quantile(&ms, 0.95),
                quantile(&ms, 0.99),
                quantile(&ms, 1.0),
                hits as f64 / picked.len().max(1) as f64
            );
        };
        for (i, shape) in SHAPES.iter().enumerate() {
            row(shape, &|s| s == i, String::new());
        }
        row(
            "**all**",
            &|_| true,
            format!(
                "{:.1} ({} at the end)",
                self.samples.len() as f64 / self.wall_s,
                load()
            ),
        );
    }
}

// ---------------------------------------------------------------- freshness

async fn freshness(api: &Api, app: &TestApp, probes: usize, vocab: &Vocab) -> anyhow::Result<()> {
    let mut rng = Rng(Utc::now().timestamp_millis() as u64);
    let mut post_ms = Vec::new();
    let mut find_ms = Vec::new();
    let mut total_ms = Vec::new();
    let mut searches = Vec::new();
    let mut not_found = 0;
    for i in 0..probes {
        let word: String = (0..12).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
        let word = format!("zq{word}");
        let content = format!(
            "Freshness probe {i}: the {word} toggle in {} decides whether {} retries.",
            rng.pick(&vocab.paths),
            rng.pick(&vocab.idents)
        );
        let t = Instant::now();
        let (status, res) = app
            .post(
                "/v1/memories",
                Some(&app.ingest_token),
                &json!({ "projectId": app.project_id.to_string(), "content": content, "kind": "discovery" }),
            )
            .await;
        anyhow::ensure!(status == 201, "POST /v1/memories: {status} {res}");
        let id: Uuid = res["memory"]["id"].as_str().context("memory id")?.parse()?;
        let posted = t.elapsed();
        let f = Instant::now();
        let mut n = 0;
        loop {
            n += 1;
            let hits = api.search(app.project_id, &word, None).await?;
            if hits.contains(&id) {
                break;
            }
            if f.elapsed() > Duration::from_secs(30) {
                not_found += 1;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        post_ms.push(posted.as_secs_f64() * 1000.0);
        find_ms.push(f.elapsed().as_secs_f64() * 1000.0);
        total_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        searches.push(n as f64);
    }
    for v in [&mut post_ms, &mut find_ms, &mut total_ms, &mut searches] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "## Freshness ({probes} probes: POST /v1/memories in the big project, then search its unique word, default mode)\n"
    );
    println!("| what | p50 | max |\n|---|---|---|");
    println!(
        "| POST /v1/memories (embeds, then commits) | {:.1} ms | {:.1} ms |",
        quantile(&post_ms, 0.5),
        quantile(&post_ms, 1.0)
    );
    println!(
        "| 201 → first search that finds it returns | {:.1} ms | {:.1} ms |",
        quantile(&find_ms, 0.5),
        quantile(&find_ms, 1.0)
    );
    println!(
        "| POST sent → found | {:.1} ms | {:.1} ms |",
        quantile(&total_ms, 0.5),
        quantile(&total_ms, 1.0)
    );
    println!(
        "| searches until found | {:.0} | {:.0} |",
        quantile(&searches, 0.5),
        quantile(&searches, 1.0)
    );
    println!("| never found within 30 s | {not_found} | |\n");
    Ok(())
}

// ---------------------------------------------------------------- /proc

fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The 1-minute load average and the number of cores: the box is shared, so say how busy it was.
fn load() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("load average {avg} on {cores} cores")
}

fn rss_kb() -> u64 {
    status_kb("VmRSS:")
}

fn hwm_kb() -> u64 {
    status_kb("VmHWM:")
}
