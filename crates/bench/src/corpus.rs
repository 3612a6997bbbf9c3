//! A synthetic corpus of developer memories at any size: a seeded
//! vocabulary (words, identifiers, paths, error codes, libraries), sentence
//! templates, and rows written by multi-row `INSERT … SELECT FROM unnest`.
//! A note's vector is either its title's (one of a few really embedded
//! title sentences) plus noise, or the embedding of its own text
//! (`note_vectors`, cached on disk: ~60 ms of CPU a note to make). Each
//! project holds the same notes (note k drawn from its own seed). Used by `search_scale` (a million memories) and the recall benchmark's
//! scale variant (the same questions after N newer memories).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};
use std::time::Instant;
use std::{collections::HashSet, fmt::Write};

use anyhow::Context;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::note_vectors::NoteVectors;

pub const DIMS: usize = cairn_embed::DIMS;

// ---------------------------------------------------------------- rng

/// splitmix64: the corpus is the same on every run.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

// ---------------------------------------------------------------- vocabulary

pub const WORDS: &str = "
    error test file function config request response server client cache query index table column row
    value struct field method module crate package build release deploy commit branch merge review bug fix
    issue panic crash timeout retry connection pool thread task worker queue job event hook session token
    user project team endpoint route handler middleware auth permission scope secret key hash signature
    header body payload json schema migration database transaction lock lease claim state status check
    validate parse serialize encode decode string integer array list map vector buffer stream channel
    future runtime spawn loop iterator closure trait generic lifetime borrow reference pointer memory
    allocation heap stack limit budget latency throughput benchmark metric log trace span debug warning
    level output input argument parameter option flag default environment variable path directory uuid
    timestamp clock duration interval deadline cursor page offset order sort filter search match rank score
    weight prompt summary observation context agent model provider tool result failure backoff idempotency
    duplicate conflict constraint insert update delete select join count percentile histogram sample cpu
    disk network socket port host address certificate proxy balancer replica cluster node container image
    volume pod service ingress chart template render markdown compiler linker macro attribute derive
    feature workspace dependency version lockfile lint ownership mutex atomic enum variant pattern guard
    clone display format flush fsync truncate rename metadata symlink watch notify signal interrupt
    shutdown restart reload health readiness liveness probe startup coalesce seal sweeper wakeup heuristic
    privacy redact transcript websocket protobuf webhook callback listener subscriber publisher topic
    partition consumer producer broker backpressure throttle quota burst window bucket jitter breaker
    fallback failover election leader follower quorum snapshot checkpoint vacuum analyze plan scan bitmap
    trigram collation locale encoding unicode normalize regex wildcard escape sanitize injection cookie
    password salt nonce keypair rotate revoke expire refresh bearer tenant isolation audit retention purge
    archive backup restore dump export import scheduler timer epoch timezone lexer tokenizer grammar
    visitor optimizer codegen backtrace overflow precision rounding decimal sequence trigger procedure
    aggregate subquery prepared statement pipeline keepalive evict stale fresh warm cold eviction prefetch
    compaction fragmentation bloat reindex rebuild blocking executor waker dispatch fixture mock stub
    snapshot flaky race deadlock contention hotspot profile flamegraph alert dashboard incident rollback
    rollout canary toggle experiment onboarding signup login captcha allowlist firewall tunnel upload
    download presign blob etag multipart streaming heartbeat reconnect invoice billing refund checkout
    cart inventory shipment catalog notification digest avatar thumbnail locale translation";

pub const VERBS: &str = "parse load build fetch resolve encode decode flush spawn retry validate render merge
    split emit claim seal drain sweep index rank score hash sign verify mint revoke cache evict lookup
    insert update delete select filter sort wrap open close read write send recv poll apply compute
    normalize refresh prune";

pub const NOUNS: &str = "Config Request Response Token Session Project Team Event Job Queue Worker Pool Cache
    Index Query Cursor Page Filter Result Error Budget Lease Claim Batch Chunk Buffer Stream Channel
    Payload Header Body Schema Migration Table Row Column Summary Observation Context Prompt Agent Model
    Provider Hook Handler Router Server Client Socket Timer Deadline Snapshot Checkpoint Transcript Turn
    Tool Path File Manifest Workspace Module Span Trace Metric Vector Invoice Refund Cart";

pub const FIELD_SUFFIXES: &[&str] = &[
    "id", "count", "ttl", "limit", "at", "key", "name", "path", "size", "ms", "bytes", "version", "hash",
    "state",
];
pub const TYPE_SUFFIXES: &[&str] = &[
    "Error", "Builder", "Config", "Handle", "Guard", "Store", "Client", "Service", "Manager", "Policy",
];

pub const LIBS: &str =
    "tokio sqlx axum serde reqwest hyper tonic clap tracing rayon moka redis postgres kafka
    nginx envoy docker kubernetes terraform helm react nextjs vite webpack jest vitest pytest django flask
    fastapi celery sidekiq rails prisma drizzle graphql apollo grpc protobuf openssl rustls jemalloc mimalloc
    sentry prometheus grafana opentelemetry jaeger elasticsearch meilisearch tantivy sqlite duckdb clickhouse
    rabbitmq nats minio vault consul";

pub const ERRNOS: &str =
    "ECONNREFUSED ECONNRESET ETIMEDOUT EADDRINUSE ENOSPC EMFILE EPIPE ENOENT EACCES EAGAIN
    EHOSTUNREACH ENETUNREACH EEXIST ENOTDIR EISDIR EBADF ENOMEM EINTR";

pub const SQLSTATES: &str =
    "23505 40001 57014 53300 08006 42P01 22P02 40P01 55P03 25P02 23503 42703 53200 08001 22001";

pub const DIRS: &[(&str, &str)] = &[
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
    ("crates/shared/src", "rs"),
    ("crates/retrieval/src", "rs"),
    ("crates/cli/src", "rs"),
    ("web/src/components", "tsx"),
    ("web/src/pages", "tsx"),
    ("web/src/lib", "ts"),
    ("web/src/hooks", "ts"),
    ("mobile/app/screens", "tsx"),
    ("migrations", "sql"),
    ("docs", "md"),
    ("docs/adr", "md"),
    ("scripts", "sh"),
    ("deploy/helm/templates", "yaml"),
    ("deploy/terraform", "tf"),
    ("tools/py", "py"),
    ("billing/src/main/java/com/acme/billing", "java"),
    ("ledger/internal", "go"),
    (".github/workflows", "yml"),
];

/// Sentence templates: `{I}` identifier, `{F}` field, `{T}` type, `{P}` path,
/// `{E}` error code, `{W}` word, `{L}` library, `{V}` version, `{N}` number.
pub const TEMPLATES: &[&str] = &[
    "Fixed {E} in {I} by checking the {W} before calling {I}",
    "{I} in {P} panicked with {E} when the {W} {W} was empty",
    "Bumped {L} to {V} because {I} hit {E} under load",
    "Added a {N} ms timeout around {I} in {P}",
    "The {W} cache in {P} is keyed by {F}, not by {F}",
    "Tests in {P} are flaky: {I} races the {W} {W}",
    "Migration {N} adds an index on {F} for {I}",
    "{T} now derives Clone so {I} no longer copies the {W}",
    "Renamed {I} to {I} across {P} and {P}",
    "Decided to keep the {W} {W} in {L} instead of moving it to {L}",
    "Retry {I} up to {N} times on {E} with {W} backoff",
    "Profiling showed {I} spends {N}% of its time in {L} {W}",
    "Config key {F} defaults to {N}; {I} reads it at startup",
    "{E} from {L} means the {W} pool is exhausted; raised the limit to {N}",
    "Endpoint /v1/{W}/{F} returns {E} when {I} fails",
    "Moved {I} from {P} to {P} to break a dependency cycle",
    "The {W} worker drops {T} events when the queue holds over {N}",
    "Investigated why {I} is slow: {N} queries per {W} in {P}",
    "Logged {F} and {F} in {I} to debug {E}",
    "CI job {W}-{W} fails with {E} on {L} {V}",
    "{T} wraps {L} so that {I} can be mocked in {P}",
    "The {W} {W} flag is read by {I} on every {W}",
    "{I} must hold the {W} lock before it touches {F}",
    "Split {P} into {P} and {P}; {T} stays public",
    "{L} {V} changed the default {W}; set {F} explicitly in {P}",
    "{I} returns {T} instead of panicking on {E}",
    "The {W} {W} in {P} assumes {F} is never null",
    "Replaced the {W} loop in {I} with a batch {W} of {N} rows",
    "{E} in production came from {I} reading a stale {F}",
    "Documented how {T} maps {F} to {F} in {P}",
    "Removed the {W} fallback from {I}; {L} handles {E} itself",
    "Benchmarked {I}: p99 went from {N} ms to {N} ms after caching {F}",
    "{I} and {I} share the {W} {W}, so a change to {F} affects both",
    "Pinned {L} at {V}; {V} breaks {T} with {E}",
    "The {W} page in {P} calls {I} twice on mount",
];

/// Question templates for full-sentence queries.
pub const QUESTIONS: &[&str] = &[
    "why does {I} fail with {E}",
    "where is {F} set for the {W} {W}",
    "how do we retry {I} when {L} returns {E}",
    "what changed in {P} around {I}",
    "who calls {I} from {P}",
    "why is the {W} {W} slow in {L}",
    "how is {T} built from {F}",
    "what does {E} mean in {I}",
    "when did we bump {L} to {V}",
    "which config sets the {W} timeout for {I}",
    "is {F} still used by {T}",
    "how does {I} handle an empty {W}",
];

pub const KINDS: &[&str] = &["discovery", "change", "bugfix", "feature", "decision", "refactor"];
pub const CONCEPTS: &[&str] = &[
    "how-it-works",
    "problem-solution",
    "gotcha",
    "pattern",
    "trade-off",
    "why-it-exists",
    "what-changed",
];

#[derive(Clone)]
pub struct Vocab {
    pub words: Vec<String>,
    pub idents: Vec<String>,
    pub fields: Vec<String>,
    pub types: Vec<String>,
    pub paths: Vec<String>,
    pub errors: Vec<String>,
    pub libs: Vec<String>,
    pub versions: Vec<String>,
}

pub fn dedup(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    v.into_iter().filter(|w| seen.insert(w.clone())).collect()
}

impl Default for Vocab {
    fn default() -> Self {
        Self::new()
    }
}

impl Vocab {
    pub fn new() -> Vocab {
        let words = dedup(WORDS.split_whitespace().map(str::to_string));
        let verbs: Vec<&str> = VERBS.split_whitespace().collect();
        let nouns: Vec<&str> = NOUNS.split_whitespace().collect();
        let idents = dedup(
            verbs
                .iter()
                .flat_map(|v| nouns.iter().map(move |n| format!("{v}{n}"))),
        );
        let fields = dedup(nouns.iter().flat_map(|n| {
            FIELD_SUFFIXES
                .iter()
                .map(move |s| format!("{}_{s}", n.to_lowercase()))
        }));
        let types = dedup(
            nouns
                .iter()
                .flat_map(|n| TYPE_SUFFIXES.iter().map(move |s| format!("{n}{s}"))),
        );
        let mut paths = Vec::new();
        let mut seen = HashSet::new();
        let mut i = 0usize;
        while paths.len() < 3_000 {
            let (dir, ext) = DIRS[i % DIRS.len()];
            let stem = &fields[(i / DIRS.len() * 7 + i) % fields.len()];
            let path = format!("{dir}/{stem}.{ext}");
            if seen.insert(path.clone()) {
                paths.push(path);
            }
            i += 1;
        }
        let mut rng = Rng(7);
        let mut errors: Vec<String> = ERRNOS
            .split_whitespace()
            .chain(SQLSTATES.split_whitespace())
            .map(str::to_string)
            .collect();
        errors.extend((0..200).map(|_| format!("E0{:03}", 1 + rng.below(799))));
        errors.extend((0..200).map(|_| format!("CAIRN-{}", 1000 + rng.below(9000))));
        errors.extend(
            [
                "HTTP-401", "HTTP-403", "HTTP-409", "HTTP-413", "HTTP-422", "HTTP-429", "HTTP-502",
                "HTTP-503",
            ]
            .map(str::to_string),
        );
        let errors = dedup(errors);
        let libs = dedup(LIBS.split_whitespace().map(str::to_string));
        let versions =
            dedup((0..300).map(|_| format!("{}.{}.{}", rng.below(4), rng.below(40), rng.below(20))));
        Vocab {
            words,
            idents,
            fields,
            types,
            paths,
            errors,
            libs,
            versions,
        }
    }

    pub fn fill(&self, template: &str, rng: &mut Rng) -> String {
        let mut out = String::with_capacity(template.len() + 40);
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '{'
                && let Some(&slot) = chars.peek()
            {
                chars.next();
                chars.next(); // '}'
                match slot {
                    'I' => out.push_str(rng.pick(&self.idents).as_str()),
                    'F' => out.push_str(rng.pick(&self.fields).as_str()),
                    'T' => out.push_str(rng.pick(&self.types).as_str()),
                    'P' => out.push_str(rng.pick(&self.paths).as_str()),
                    'E' => out.push_str(rng.pick(&self.errors).as_str()),
                    'W' => out.push_str(rng.pick(&self.words).as_str()),
                    'L' => out.push_str(rng.pick(&self.libs).as_str()),
                    'V' => out.push_str(rng.pick(&self.versions).as_str()),
                    _ => {
                        let _ = write!(out, "{}", 2 + rng.below(5000));
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    pub fn sentence(&self, rng: &mut Rng) -> String {
        let t = rng.pick(TEMPLATES);
        self.fill(t, rng)
    }

    /// `n` distinct title sentences.
    pub fn pool_texts(&self, n: usize) -> Vec<String> {
        let mut rng = Rng(42);
        dedup((0..n * 2).map(|_| self.sentence(&mut rng)))
            .into_iter()
            .take(n)
            .collect()
    }

    /// Every single word a one-word query may be (no stop words).
    pub fn single_words(&self) -> Vec<String> {
        self.words
            .iter()
            .chain(&self.idents)
            .chain(&self.fields)
            .chain(&self.types)
            .chain(&self.errors)
            .chain(&self.libs)
            .cloned()
            .collect()
    }

    pub fn any_word(&self, rng: &mut Rng) -> String {
        match rng.below(10) {
            0..=4 => rng.pick(&self.words).clone(),
            5..=6 => rng.pick(&self.idents).clone(),
            7 => rng.pick(&self.fields).clone(),
            8 => rng.pick(&self.libs).clone(),
            _ => rng.pick(&self.errors).clone(),
        }
    }
}

// ---------------------------------------------------------------- needles

// ---------------------------------------------------------------- seeding

pub struct Corpus {
    pub vocab: Vocab,
    pub titles: Vec<String>,
    pub vectors: Vec<Vec<f32>>,
    pub projects: Vec<Uuid>,
    pub team: Uuid,
    pub model: String,
    pub noise: f32,
    /// Each note's vector the embedding of its own text, instead of its
    /// title's vector plus noise (titles repeat either way; the rest of a
    /// note is its own).
    pub own: Option<Arc<NoteVectors>>,
    /// Memories besides the needles.
    pub n: usize,
    /// Each project's first note (its earlier notes were seeded before).
    pub first: usize,
    /// The newest memory's time; the oldest is `span_days` before it.
    pub t0: DateTime<Utc>,
    pub span_days: f64,
}

/// One batch's columns, as the INSERT binds them.
#[derive(Default)]
pub struct Batch {
    pub ids: Vec<Uuid>,
    pub projects: Vec<Uuid>,
    pub kinds: Vec<String>,
    pub titles: Vec<String>,
    pub subtitles: Vec<String>,
    pub facts: Vec<String>,
    pub narratives: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub created: Vec<DateTime<Utc>>,
    /// `DIMS` per row.
    pub vectors: Vec<f32>,
}

pub const INSERT_OBSERVATIONS: &str = "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, subtitle, facts,
        narrative, concepts, files_read, files_modified, provider, model, created_at, updated_at)
     SELECT id, $1, p, 'bench:' || id, k, t, s, string_to_array(f, E'\\n'), n, string_to_array(c, ' '),
        string_to_array(fr, ' '), string_to_array(fm, ' '), 'bench', 'synthetic', at, at
     FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                 $10::text[], $11::text[], $12::timestamptz[])
          AS u(id, p, k, t, s, f, n, c, fr, fm, at)";

pub const INSERT_VECTORS: &str =
    "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
     SELECT id, p, $3, $5::int, ($4::real[])[((i - 1) * $5::int + 1)::int : (i * $5::int)::int]
     FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(id, p, i)";

/// One corpus note, the same in every project.
pub struct Note {
    pub kind: &'static str,
    pub title: String,
    title_index: usize,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub narrative: String,
    pub concepts: Vec<&'static str>,
    pub read: Vec<String>,
    pub modified: Vec<String>,
}

impl Note {
    /// The text Cairn embeds for an observation: title, subtitle, facts,
    /// narrative, one a line (`store::embeddings::missing`).
    pub fn text(&self) -> String {
        [
            self.title.as_str(),
            self.subtitle.as_str(),
            &self.facts.join("\n"),
            self.narrative.as_str(),
        ]
        .join("\n")
    }
}

impl Corpus {
    /// Projects the rows are dealt to.
    fn p(&self) -> usize {
        self.projects.len().max(1)
    }

    /// Note `k` of each project, drawn from its own seed (with `rng` after).
    fn note(&self, k: usize) -> (Note, Rng) {
        let mut rng = Rng(0xC0FFEE ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let v = &self.vocab;
        let title_index = rng.below(self.titles.len());
        let title = self.titles[title_index].clone();
        let kind = *rng.pick(KINDS);
        let subtitle = format!(
            "{} {} in {}",
            rng.pick(&v.words),
            rng.pick(&v.words),
            rng.pick(&v.idents)
        );
        let facts = (0..1 + rng.below(3)).map(|_| v.sentence(&mut rng)).collect();
        let narrative: Vec<String> = (0..2 + rng.below(3)).map(|_| v.sentence(&mut rng)).collect();
        let concepts = (0..1 + rng.below(2)).map(|_| *rng.pick(CONCEPTS)).collect();
        let read = (0..1 + rng.below(3))
            .map(|_| rng.pick(&v.paths).clone())
            .collect();
        let modified = (0..rng.below(3)).map(|_| rng.pick(&v.paths).clone()).collect();
        let note = Note {
            kind,
            title,
            title_index,
            subtitle,
            facts,
            narrative: narrative.join(". ") + ".",
            concepts,
            read,
            modified,
        };
        (note, rng)
    }

    /// The texts of every note the rows hold (each project's notes
    /// `first..first + n / P`), to embed before seeding with `own` vectors.
    pub fn note_texts(&self) -> Vec<String> {
        (self.first..self.first + self.n.div_ceil(self.p()))
            .map(|k| self.note(k).0.text())
            .collect()
    }

    /// Rows `lo..hi` of the corpus (row g: project g mod P, note
    /// `first + g / P`, created from `span_days` before `t0` (g = 0) to `t0`).
    pub fn batch(&self, lo: usize, hi: usize) -> Batch {
        let mut b = Batch::default();
        let span = self.span_days * 86_400.0;
        let amplitude = self.noise / (DIMS as f32).sqrt() * 3f32.sqrt();
        for g in lo..hi {
            let (note, mut rng) = self.note(self.first + g / self.p());
            b.ids.push(Uuid::now_v7());
            b.projects.push(self.projects[g % self.p()]);
            b.kinds.push(note.kind.to_string());
            let at = b.vectors.len();
            match &self.own {
                Some(own) => b.vectors.extend_from_slice(own.get(&note.text())),
                None => {
                    b.vectors.extend(
                        self.vectors[note.title_index]
                            .iter()
                            .map(|x| x + (rng.unit() * 2.0 - 1.0) * amplitude),
                    );
                    cairn_embed::normalise(&mut b.vectors[at..]);
                }
            }
            b.titles.push(note.title);
            b.subtitles.push(note.subtitle);
            b.facts.push(note.facts.join("\n"));
            b.narratives.push(note.narrative);
            b.concepts.push(note.concepts.join(" "));
            b.files_read.push(note.read.join(" "));
            b.files_modified.push(note.modified.join(" "));
            let age = span * (1.0 - g as f64 / self.n as f64);
            b.created
                .push(self.t0 - chrono::Duration::milliseconds((age * 1000.0) as i64));
        }
        b
    }
}

pub async fn insert_batch(pool: &PgPool, team: Uuid, model: &str, b: Batch) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query(INSERT_OBSERVATIONS)
        .bind(team)
        .bind(&b.ids)
        .bind(&b.projects)
        .bind(&b.kinds)
        .bind(&b.titles)
        .bind(&b.subtitles)
        .bind(&b.facts)
        .bind(&b.narratives)
        .bind(&b.concepts)
        .bind(&b.files_read)
        .bind(&b.files_modified)
        .bind(&b.created)
        .execute(&mut *tx)
        .await
        .context("inserting observations")?;
    sqlx::query(INSERT_VECTORS)
        .bind(&b.ids)
        .bind(&b.projects)
        .bind(model)
        .bind(&b.vectors)
        .bind(DIMS as i32)
        .execute(&mut *tx)
        .await
        .context("inserting vectors")?;
    tx.commit().await?;
    Ok(())
}

pub async fn seed_corpus(pool: &PgPool, corpus: Arc<Corpus>, batch: usize) -> anyhow::Result<()> {
    let batches = corpus.n.div_ceil(batch);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for _ in 0..2 {
        let (pool, corpus, next) = (pool.clone(), corpus.clone(), next.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= batches {
                    return anyhow::Ok(());
                }
                let (lo, hi) = (i * batch, ((i + 1) * batch).min(corpus.n));
                let c = corpus.clone();
                let b = tokio::task::spawn_blocking(move || c.batch(lo, hi)).await?;
                insert_batch(&pool, corpus.team, &corpus.model, b).await?;
                if (i + 1) % 20 == 0 || i + 1 == batches {
                    eprintln!(
                        "seeded {}/{batches} batches, {:.0} s",
                        i + 1,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(projects: usize, first: usize, n: usize) -> Corpus {
        let vocab = Vocab::new();
        let titles = vocab.pool_texts(20);
        let vectors = (0..titles.len())
            .map(|i| {
                let mut v = vec![0.0; DIMS];
                v[i] = 1.0;
                v
            })
            .collect();
        Corpus {
            vocab,
            titles,
            vectors,
            projects: (0..projects).map(|_| Uuid::now_v7()).collect(),
            team: Uuid::now_v7(),
            model: "m".into(),
            noise: 0.3,
            own: None,
            n,
            first,
            t0: Utc::now(),
            span_days: 1.0,
        }
    }

    fn text(b: &Batch, row: usize) -> String {
        [
            &b.titles[row],
            &b.subtitles[row],
            &b.facts[row],
            &b.narratives[row],
        ]
        .map(String::as_str)
        .join("\n")
    }

    #[test]
    fn every_row_is_a_note_whose_text_was_listed_and_each_project_holds_the_same_notes() {
        let c = corpus(3, 5, 8);
        let texts = c.note_texts();
        assert_eq!(texts.len(), 3, "notes 5, 6 and 7 of each project");
        let b = c.batch(0, 8);
        for row in 0..8 {
            assert_eq!(text(&b, row), texts[row / 3], "row {row}");
            assert_eq!(b.projects[row], c.projects[row % 3]);
        }
        // A later step continues where the earlier one stopped.
        let earlier = corpus(3, 0, 24);
        assert_eq!(earlier.note_texts()[5..8], texts[..]);
    }
}
