//! memory_truth: does memory stay true to the code, and what does it cost?
//!
//! 1. A replay through the real API and an in-process generator (the
//!    `heuristic` provider): six sessions over a repository of ten files,
//!    each turn posted as Claude Code's hooks post it and generated before
//!    the next, in which four files are later rewritten and one discovery (a
//!    file read and a failing build with the same error) is made in three
//!    sessions. Then:
//!    - **staleness precision and recall**: an observation should be marked
//!      (stale or superseded) exactly when a later turn edited one of its
//!      files; marked = its state;
//!    - **share of injected context about changed code**, at a new
//!      SessionStart: with every state reset to live (what injection gave
//!      before memory was tied to code) and as is (superseded memories are
//!      not injected, stale ones are marked);
//!    - **duplicates per 100 observations** before and after the
//!      generator's upkeep pass (`cairn_generator::upkeep`);
//!    - **line spans**: a session reads six parts of a 300-line file (one
//!      turn each, with the file's hash), another edits two places of that
//!      version; precision and recall of the memories marked against those
//!      whose lines a hunk touched (the whole-file rule marks all six).
//! 2. **PreToolUse file-memory latency** with `--observations` (100,000)
//!    observations about `--files` (2,000) files seeded in one project:
//!    `--requests` Read PreToolUse hooks for random files, one at a time and
//!    at concurrency 4, timed at the client; p50/p99/max and the share
//!    answered with memories.
//! 3. **Ask** on that project: latency p50/p99 of `POST /v1/ask` offline
//!    (the heuristic: retrieval and the verbatim answer), and the input
//!    tokens one question costs a model (cl100k, system + user of the
//!    request an OpenAI-compatible server receives; a local stand-in answers).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::Context;
use cairn_bench::{drop_database, quantile};
use cairn_generator::{config::GeneratorConfig, upkeep, worker};
use cairn_testkit::{Options, TestApp, cc, spawn_app, spawn_app_with};
use clap::Parser;
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Observations seeded for the PreToolUse and ask timings.
    #[arg(long, default_value_t = 100_000)]
    observations: i64,
    /// Files they are about.
    #[arg(long, default_value_t = 2_000)]
    files: i64,
    /// PreToolUse requests per concurrency.
    #[arg(long, default_value_t = 2_000)]
    requests: usize,
    /// Asks timed.
    #[arg(long, default_value_t = 200)]
    asks: usize,
}

const CWD: &str = "/home/dev/app";

/// One tool call of the replay.
enum Tool {
    Read(&'static str),
    Edit(&'static str, &'static str),
    FailingBuild(&'static str),
}

/// The replay: sessions of turns (prompt, tools).
fn script() -> Vec<Vec<(&'static str, Vec<Tool>)>> {
    use Tool::*;
    let discovery = || {
        (
            "why does the build fail?",
            vec![
                Read("build.rs"),
                FailingBuild("error: failed to run custom build command: is `clang` installed?"),
            ],
        )
    };
    vec![
        vec![
            discovery(),
            (
                "how does the parser work",
                vec![Read("src/parser.rs"), Read("src/lexer.rs")],
            ),
            (
                "make the parser return a Result",
                vec![Edit("src/parser.rs", "fn parse() -> Result<Ast>")],
            ),
        ],
        vec![
            (
                "look at the cache",
                vec![Read("src/cache.rs"), Read("src/config.rs")],
            ),
            (
                "where are tokens defined",
                vec![Read("src/token.rs"), Read("src/lexer.rs")],
            ),
        ],
        vec![
            discovery(),
            (
                "rewrite the lexer to keep spans",
                vec![Read("src/lexer.rs"), Edit("src/lexer.rs", "struct Span")],
            ),
            ("read the docs", vec![Read("README.md")]),
        ],
        vec![
            (
                "cache evicts too early",
                vec![Read("src/cache.rs"), Edit("src/cache.rs", "ttl: Duration")],
            ),
            (
                "check the server",
                vec![Read("src/server.rs"), Read("src/config.rs")],
            ),
        ],
        vec![
            discovery(),
            (
                "config needs a default port",
                vec![Edit("src/config.rs", "port: 8080")],
            ),
            ("read main", vec![Read("src/main.rs")]),
        ],
    ]
}

fn tool_event(session: &str, tool: &Tool) -> Value {
    let (name, input, response) = match tool {
        Tool::Read(path) => (
            "Read",
            json!({ "file_path": format!("{CWD}/{path}") }),
            json!({ "file": { "filePath": format!("{CWD}/{path}"), "content": format!("// {path}\nfn main() {{}}\n") } }),
        ),
        Tool::Edit(path, new) => (
            "Edit",
            json!({ "file_path": format!("{CWD}/{path}"), "old_string": "fn old()", "new_string": new }),
            json!({ "filePath": format!("{CWD}/{path}"), "success": true }),
        ),
        Tool::FailingBuild(error) => (
            "Bash",
            json!({ "command": "cargo build" }),
            json!({ "stdout": "", "stderr": error, "exit_code": 101 }),
        ),
    };
    cc(
        session,
        "PostToolUse",
        json!({ "tool_name": name, "tool_use_id": Uuid::new_v4().to_string(),
                "tool_input": input, "tool_response": response }),
    )
}

async fn hook(app: &TestApp, body: Value) -> anyhow::Result<Value> {
    let (status, res) = app.hook(body).await;
    anyhow::ensure!(status == 200, "hook answered {status}: {res}");
    Ok(res)
}

/// Waits until no job is queued or processing.
async fn settle(pool: &PgPool) -> anyhow::Result<()> {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM generation_jobs WHERE status IN ('queued', 'processing')",
        )
        .fetch_one(pool)
        .await?;
        if open == 0 {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < until, "{open} jobs still open after 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The repository-relative path of a stored file path.
fn relative(path: &str) -> String {
    path.strip_prefix(CWD)
        .map(|p| p.trim_start_matches('/'))
        .unwrap_or(path)
        .to_string()
}

/// A turn's place in the replay: (session, prompt number).
type At = (usize, i32);
/// An observation: its id, files, turn and state.
type Observed = (Uuid, BTreeSet<String>, At, String);
/// A stored observation: id, files, session, prompt number, state.
type Row = (Uuid, Vec<String>, String, Option<i32>, String);

struct Replayed {
    observations: Vec<Observed>,
    /// Per file: the positions of the turns that edited it.
    edits: HashMap<String, Vec<At>>,
}

async fn replay(app: &TestApp) -> anyhow::Result<Replayed> {
    let mut edits: HashMap<String, Vec<At>> = HashMap::new();
    let mut sessions = Vec::new();
    for (s, turns) in script().iter().enumerate() {
        let session = format!("truth-{s}");
        hook(app, cc(&session, "SessionStart", json!({ "source": "startup" }))).await?;
        for (t, (prompt, tools)) in turns.iter().enumerate() {
            hook(app, cc(&session, "UserPromptSubmit", json!({ "prompt": prompt }))).await?;
            for tool in tools {
                if let Tool::Edit(path, _) = tool {
                    edits.entry(path.to_string()).or_default().push((s, t as i32 + 1));
                }
                hook(app, tool_event(&session, tool)).await?;
            }
            hook(
                app,
                cc(
                    &session,
                    "Stop",
                    json!({ "last_assistant_message": format!("Done: {prompt}.") }),
                ),
            )
            .await?;
            settle(&app.pool).await?;
        }
        hook(app, cc(&session, "SessionEnd", json!({ "reason": "exit" }))).await?;
        settle(&app.pool).await?;
        sessions.push(session);
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT o.id, o.files_read || o.files_modified, s.external_session_id, o.prompt_number, o.state
         FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.kind <> 'plan'",
    )
    .fetch_all(&app.pool)
    .await?;
    let observations = rows
        .into_iter()
        .map(|(id, files, session, turn, state)| {
            let s = sessions.iter().position(|x| *x == session).unwrap_or_default();
            let files = files.iter().map(|f| relative(f)).collect();
            (id, files, (s, turn.unwrap_or_default()), state)
        })
        .collect();
    Ok(Replayed { observations, edits })
}

impl Replayed {
    /// Whether a turn after the observation's edited one of its files.
    fn outdated(&self, files: &BTreeSet<String>, at: At) -> bool {
        files
            .iter()
            .any(|f| self.edits.get(f).is_some_and(|e| e.iter().any(|edit| *edit > at)))
    }
}

/// The observation ids a context injects (each is shown with its id in backticks).
fn injected(context: &str, known: &[Uuid]) -> Vec<Uuid> {
    known
        .iter()
        .copied()
        .filter(|id| context.contains(&id.to_string()))
        .collect()
}

async fn session_start_context(app: &TestApp, session: &str) -> anyhow::Result<String> {
    let res = hook(app, cc(session, "SessionStart", json!({ "source": "startup" }))).await?;
    Ok(res["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Non-merged observations repeating an older one (kind, title, files), per 100 non-merged.
async fn duplicates_per_100(pool: &PgPool) -> anyhow::Result<f64> {
    let (dups, total): (i64, i64) = sqlx::query_as(
        "WITH o AS (SELECT id, created_at, kind, lower(title) AS title,
                           ARRAY(SELECT DISTINCT f FROM unnest(files_read || files_modified) f ORDER BY f) AS files
                    FROM observations WHERE state <> 'merged')
         SELECT (SELECT count(*) FROM o a WHERE EXISTS (SELECT 1 FROM o b WHERE b.kind = a.kind AND b.title = a.title
                    AND b.files = a.files AND (b.created_at, b.id) < (a.created_at, a.id))),
                (SELECT count(*) FROM o)",
    )
    .fetch_one(pool)
    .await?;
    Ok(if total == 0 {
        0.0
    } else {
        dups as f64 * 100.0 / total as f64
    })
}

/// An in-process generator with the heuristic provider.
fn generator_config(app: &TestApp) -> anyhow::Result<GeneratorConfig> {
    GeneratorConfig::from_env(
        &[
            ("CAIRN_DATABASE_URL", app.database_url.as_str()),
            ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
            ("CAIRN_PROVIDER", "heuristic"),
            ("CAIRN_WORKERS", "2"),
            ("CAIRN_SWEEP_MS", "100"),
            // Upkeep is run by hand below, after the staleness figures.
            ("CAIRN_UPKEEP_MS", "3600000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<HashMap<_, _>>(),
    )
    .map_err(Into::into)
}

async fn truth(app: &TestApp) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    let generator = tokio::spawn(worker::run(generator_config(app)?, shutdown.clone()));
    let replayed = replay(app).await?;
    shutdown.cancel();
    generator.await??;

    let (mut marked, mut should, mut both) = (0, 0, 0);
    for (_, files, at, state) in &replayed.observations {
        let is_marked = state == "stale" || state == "superseded";
        let outdated = replayed.outdated(files, *at);
        marked += usize::from(is_marked);
        should += usize::from(outdated);
        both += usize::from(is_marked && outdated);
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    println!(
        "replay: {} sessions, {} observations; {} files edited later",
        script().len(),
        replayed.observations.len(),
        replayed.edits.len()
    );
    println!(
        "staleness precision {:.2} ({both} of {marked} marked), recall {:.2} ({both} of {should} that should be)",
        ratio(both, marked),
        ratio(both, should)
    );

    // Injected context, with states ignored (all live) and as is.
    let ids: Vec<Uuid> = replayed.observations.iter().map(|o| o.0).collect();
    let by_id: BTreeMap<Uuid, _> = replayed.observations.iter().map(|o| (o.0, o)).collect();
    let states: Vec<(Uuid, String)> = sqlx::query_as("SELECT id, state FROM observations")
        .fetch_all(&app.pool)
        .await?;
    sqlx::query("UPDATE observations SET state = 'live'")
        .execute(&app.pool)
        .await?;
    let before = session_start_context(app, "truth-before").await?;
    for (id, state) in &states {
        sqlx::query("UPDATE observations SET state = $2 WHERE id = $1")
            .bind(id)
            .bind(state)
            .execute(&app.pool)
            .await?;
    }
    let after = session_start_context(app, "truth-after").await?;
    let outdated = |id: &Uuid| by_id.get(id).is_some_and(|o| replayed.outdated(&o.1, o.2));
    let before_ids = injected(&before, &ids);
    let after_ids = injected(&after, &ids);
    let share = |v: &[Uuid], f: &dyn Fn(&Uuid) -> bool| {
        let n = v.iter().filter(|id| f(id)).count();
        format!("{:.0} % ({n} of {})", ratio(n, v.len()) * 100.0, v.len())
    };
    let state_of = |id: &Uuid| {
        states
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str())
            .unwrap_or("")
    };
    println!(
        "injected memories about changed code: before (states ignored) {}; after {} — of them shown marked stale {}, unmarked {}",
        share(&before_ids, &outdated),
        share(&after_ids, &outdated),
        share(&after_ids, &|id| outdated(id) && state_of(id) == "stale"),
        share(&after_ids, &|id| outdated(id) && state_of(id) != "stale"),
    );

    let dup_before = duplicates_per_100(&app.pool).await?;
    let pass = upkeep::run(&app.pool, "bench", 10).await?;
    let dup_after = duplicates_per_100(&app.pool).await?;
    println!(
        "duplicates per 100 observations: before consolidation {dup_before:.1}, after {dup_after:.1} ({} merged)",
        pass.merged
    );
    line_spans(app).await
}

/// The parts of `src/engine.rs` (300 lines) read in the line-span replay,
/// one turn each, and the hunks of the later edit ([old start, old lines,
/// new start, new lines]).
const READ_RANGES: [(i64, i64); 6] = [(1, 20), (50, 70), (100, 120), (150, 170), (200, 220), (250, 270)];
const EDIT_HUNKS: [[i64; 4]; 2] = [[105, 3, 105, 5], [255, 2, 257, 2]];

/// Line spans: one session reads six parts of a file (one turn each, the
/// file's hash sent as `cairn hook` sends it), another edits two places of
/// that version. Should be marked: the memories whose lines a hunk touched;
/// the whole-file rule would mark all six.
async fn line_spans(app: &TestApp) -> anyhow::Result<()> {
    use sha2::{Digest, Sha256};
    let path = format!("{CWD}/src/engine.rs");
    let v1: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let sha = |text: &str| hex::encode(Sha256::digest(text.as_bytes()));
    let post = |session: &str, body: Value, hash: String| {
        let body = cc(session, "PostToolUse", body);
        async move {
            let (status, res) = app.hook_with_hash(body, &hash).await;
            anyhow::ensure!(status == 200, "hook answered {status}: {res}");
            anyhow::Ok(())
        }
    };
    let shutdown = CancellationToken::new();
    let generator = tokio::spawn(worker::run(generator_config(app)?, shutdown.clone()));
    let turn = |session: &'static str, prompt: &'static str| async move {
        hook(app, cc(session, "UserPromptSubmit", json!({ "prompt": prompt }))).await
    };
    let stop = |session: &'static str| async move {
        hook(
            app,
            cc(session, "Stop", json!({ "last_assistant_message": "Done." })),
        )
        .await?;
        settle(&app.pool).await
    };
    for (first, last) in READ_RANGES {
        turn("spans-read", "how does the engine work").await?;
        let read = json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "file_path": path, "offset": first, "limit": last - first + 1 },
            "tool_response": { "type": "text", "file": { "filePath": path, "content": format!("line {first}"),
                "startLine": first, "numLines": last - first + 1, "totalLines": 300 } } });
        post("spans-read", read, sha(&v1)).await?;
        stop("spans-read").await?;
    }
    turn("spans-edit", "fix the engine").await?;
    let hunks: Vec<Value> = EDIT_HUNKS
        .iter()
        .map(|h| json!({ "oldStart": h[0], "oldLines": h[1], "newStart": h[2], "newLines": h[3], "lines": [] }))
        .collect();
    let edit = json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
        "tool_input": { "file_path": path, "old_string": "line 105", "new_string": "line 105 fixed" },
        "tool_response": { "filePath": path, "originalFile": v1, "structuredPatch": hunks } });
    post("spans-edit", edit, sha(&format!("{v1}edited\n"))).await?;
    stop("spans-edit").await?;
    shutdown.cancel();
    generator.await??;

    let rows: Vec<(i32, String)> = sqlx::query_as(
        "SELECT o.prompt_number, o.state FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.external_session_id = 'spans-read' AND cardinality(o.files_read) > 0",
    )
    .fetch_all(&app.pool)
    .await?;
    let (mut marked, mut should, mut both) = (0, 0, 0);
    for (turn, state) in &rows {
        let (first, last) = READ_RANGES[(*turn as usize).saturating_sub(1).min(READ_RANGES.len() - 1)];
        let touched = EDIT_HUNKS.iter().any(|h| h[0] <= last && first < h[0] + h[1]);
        let is_marked = state != "live";
        marked += usize::from(is_marked);
        should += usize::from(touched);
        both += usize::from(is_marked && touched);
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    println!(
        "line spans: {} memories of parts of one file, an edit of two places: precision {:.2} ({both} of {marked} marked), \
         recall {:.2} ({both} of {should} that should be); whole-file staleness would mark {} (precision {:.2})",
        rows.len(),
        ratio(both, marked),
        ratio(both, should),
        rows.len(),
        ratio(should, rows.len()),
    );
    Ok(())
}

/// Seeds `n` observations about `files` files into the app's project.
async fn seed(pool: &PgPool, app: &TestApp, n: i64, files: i64) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, facts, narrative,
             files_read, files_modified, created_at)
         SELECT gen_random_uuid(), $1, $2, 'seed:' || i, (ARRAY['discovery','bugfix','change','decision'])[1 + i % 4],
                'Observation ' || i || ' about f' || (i % $4),
                ARRAY['fact ' || i || ' on the parser, cache and build', 'f' || (i % $4) || ' holds state ' || i],
                'Narrative ' || i || ': what was learned while reading the code.',
                CASE WHEN i % 3 = 0 THEN ARRAY[]::text[] ELSE ARRAY['src/f' || (i % $4) || '.rs'] END,
                CASE WHEN i % 3 = 0 THEN ARRAY['src/f' || (i % $4) || '.rs'] ELSE ARRAY[]::text[] END,
                now() - (i % 90) * interval '1 day' - (i % 86400) * interval '1 second'
         FROM generate_series(1, $3) i",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(n)
    .bind(files)
    .execute(pool)
    .await
    .context("seeding observations")?;
    // As autovacuum would after a bulk load: rows still in the GIN indexes'
    // pending lists make every lookup scan those lists (p99 70 ms instead of a few).
    sqlx::query("VACUUM ANALYZE observations").execute(pool).await?;
    Ok(())
}

fn report(what: &str, mut ms: Vec<f64>, extra: &str) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} requests{extra})",
        quantile(&ms, 0.5),
        quantile(&ms, 0.99),
        ms.last().copied().unwrap_or_default(),
        ms.len()
    );
}

async fn file_memories(app: Arc<TestApp>, args: &Args) -> anyhow::Result<()> {
    for concurrency in [1usize, 4] {
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..concurrency {
            let (app, requests, files) = (app.clone(), args.requests, args.files);
            tasks.spawn(async move {
                let mut out = Vec::new();
                for r in (worker..requests).step_by(concurrency) {
                    // Every 10th file has no memory.
                    let file = (r as i64 * 7919) % (files + files / 10);
                    let body = cc(
                        &format!("pre-{worker}"),
                        "PreToolUse",
                        json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
                                "tool_input": { "file_path": format!("{CWD}/src/f{file}.rs") } }),
                    );
                    let started = Instant::now();
                    let (status, res) = app.hook(body).await;
                    let ms = started.elapsed().as_secs_f64() * 1000.0;
                    assert_eq!(status, 200, "{res}");
                    out.push((ms, res["hookSpecificOutput"]["additionalContext"].is_string()));
                }
                out
            });
        }
        let mut all = Vec::new();
        while let Some(done) = tasks.join_next().await {
            all.extend(done?);
        }
        let answered = all.iter().filter(|(_, a)| *a).count();
        report(
            &format!("PreToolUse file memories, concurrency {concurrency}"),
            all.iter().map(|(ms, _)| *ms).collect(),
            &format!(", {answered} answered with memories"),
        );
    }
    Ok(())
}

async fn asks(app: &TestApp, args: &Args) -> anyhow::Result<()> {
    let questions = [
        "why does the build fail",
        "what holds state in f17",
        "parser cache fact",
        "what was learned about f3",
    ];
    let mut ms = Vec::new();
    for i in 0..args.asks {
        let started = Instant::now();
        let (status, res) = app
            .post(
                "/v1/ask",
                Some(&app.ingest_token),
                &json!({ "question": questions[i % questions.len()] }),
            )
            .await;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(status == 200, "ask answered {status}: {res}");
    }
    report("ask, offline (retrieval and the memories themselves)", ms, "");
    Ok(())
}

/// The input tokens of one ask's model request, counted on what a local
/// OpenAI-compatible stand-in receives.
async fn ask_tokens(n: i64, files: i64) -> anyhow::Result<()> {
    let received = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let stand_in = {
        let received = received.clone();
        axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
                let received = received.clone();
                async move {
                    received.lock().unwrap().push(body);
                    axum::Json(json!({
                        "id": "c", "object": "chat.completion", "model": "stand-in",
                        "choices": [{ "index": 0, "message": { "role": "assistant", "content": "Memory does not know." },
                                      "finish_reason": "stop" }],
                        "usage": { "prompt_tokens": 0, "completion_tokens": 5 }
                    }))
                }
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, stand_in).await });
    let app = spawn_app_with(Options {
        extra: vec![
            ("CAIRN_PROVIDER", "openai".into()),
            ("CAIRN_OPENAI_BASE_URL", format!("http://{addr}/v1")),
            ("CAIRN_OPENAI_MODEL", "stand-in".into()),
        ],
        ..Options::default()
    })
    .await;
    let pool = app.pool.clone();
    seed(&pool, &app, n.min(10_000), files).await?;
    let bpe = tiktoken_rs::cl100k_base()?;
    for q in [
        "why does the build fail",
        "what holds state in f17",
        "parser cache fact",
    ] {
        let (status, res) = app
            .post("/v1/ask", Some(&app.ingest_token), &json!({ "question": q }))
            .await;
        anyhow::ensure!(status == 200, "ask answered {status}: {res}");
    }
    let bodies = received.lock().unwrap().clone();
    let tokens: Vec<usize> = bodies
        .iter()
        .map(|b| {
            b["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    bpe.encode_with_special_tokens(m["content"].as_str().unwrap_or_default())
                        .len()
                })
                .sum()
        })
        .collect();
    println!(
        "ask input tokens per question (cl100k, 8 memories, {} questions): {:?}; output capped at {} tokens",
        tokens.len(),
        tokens,
        400
    );
    drop_database(&pool, &app.database_url).await
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let app = spawn_app().await;
    truth(&app).await?;
    drop_database(&app.pool.clone(), &app.database_url).await?;

    let app = Arc::new(spawn_app().await);
    let started = Instant::now();
    seed(&app.pool, &app, args.observations, args.files).await?;
    println!(
        "seeded {} observations about {} files in {:.0} s",
        args.observations,
        args.files,
        started.elapsed().as_secs_f64()
    );
    file_memories(app.clone(), &args).await?;
    asks(&app, &args).await?;
    drop_database(&app.pool.clone(), &app.database_url).await?;
    ask_tokens(args.observations, args.files).await
}
