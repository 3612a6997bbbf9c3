//! The retrieval engine end to end: an old memory is found among thousands
//! of newer ones by words and by meaning; tenancy, states and as-of hold in
//! every mode; a second replica's index finds a new memory at once; an
//! index rebuilt from Postgres equals the one kept current by the feed; no
//! model means words alone, never an error.

use std::{path::PathBuf, time::Duration};

use cairn_embed::Embedder;
use cairn_testkit::deploy_story::{QUESTIONS, ROOT_CAUSE, routine_note};
use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Options, TestApp, hit_ids, model_dir, search, spawn_app_with};

async fn spawn(embeddings: bool) -> TestApp {
    spawn_with(embeddings, &[]).await
}

/// [`spawn`] with more settings.
async fn spawn_with(embeddings: bool, settings: &[(&'static str, &str)]) -> TestApp {
    let (provider, dir) = match embeddings {
        true => ("local", model_dir()),
        false => ("none", PathBuf::from("/nonexistent")),
    };
    let mut extra = vec![
        ("CAIRN_EMBED_PROVIDER", provider.into()),
        ("CAIRN_EMBED_MODEL_DIR", dir.display().to_string()),
    ];
    extra.extend(settings.iter().map(|(k, v)| (*k, v.to_string())));
    spawn_app_with(Options {
        extra,
        ..Options::default()
    })
    .await
}

/// Writes memories straight to Postgres as the generator would (with
/// vectors), `age_days` old; the same text's vector is embedded once.
async fn seed(
    app: &TestApp,
    embedder: Option<&Embedder>,
    project_id: Uuid,
    texts: &[(String, f64)],
) -> Vec<Uuid> {
    let mut vectors: std::collections::HashMap<String, Vec<f32>> = Default::default();
    if let Some(e) = embedder {
        let distinct: Vec<String> = {
            let mut d: Vec<String> = texts.iter().map(|(t, _)| t.clone()).collect();
            d.sort();
            d.dedup();
            d
        };
        for chunk in distinct.chunks(32) {
            for (t, v) in chunk.iter().zip(e.embed(chunk.to_vec()).await.unwrap()) {
                vectors.insert(t.clone(), v);
            }
        }
    }
    let mut ids = Vec::with_capacity(texts.len());
    let mut tx = app.pool.begin().await.unwrap();
    for (text, age_days) in texts {
        let id = Uuid::now_v7();
        let at = Utc::now() - chrono::Duration::seconds((age_days * 86_400.0) as i64);
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative,
                 provider, model, created_at, updated_at)
             VALUES ($1, $2, $3, 'test:' || $1, 'discovery', left($4, 60), $4, 'heuristic', 'none', $5, $5)",
        )
        .bind(id)
        .bind(app.team_id)
        .bind(project_id)
        .bind(text)
        .bind(at)
        .execute(&mut *tx)
        .await
        .unwrap();
        if let (Some(e), Some(v)) = (embedder, vectors.get(text)) {
            sqlx::query(
                "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id)
            .bind(project_id)
            .bind(e.model())
            .bind(v.len() as i32)
            .bind(v)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        ids.push(id);
    }
    tx.commit().await.unwrap();
    ids
}

fn routine(n: usize) -> Vec<(String, f64)> {
    (0..n)
        .map(|i| {
            let text = routine_note(i);
            // Newer than the root cause (400 days old): from 300 days ago to now.
            (text, 300.0 * (1.0 - i as f64 / n as f64))
        })
        .collect()
}

fn q(text: &str) -> String {
    text.replace(' ', "%20")
}

#[tokio::test]
async fn an_old_root_cause_is_found_among_2500_newer_routine_notes_by_every_question() {
    let app = spawn(true).await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    let old = seed(
        &app,
        Some(&embedder),
        app.project_id,
        &[(ROOT_CAUSE.to_string(), 400.0)],
    )
    .await[0];
    seed(&app, Some(&embedder), app.project_id, &routine(2_500)).await;
    for question in QUESTIONS {
        let top = hit_ids(&search(&app, &format!("query={}&limit=5", q(question))).await);
        assert!(top.contains(&old), "default mode, {question:?}: {top:?}");
        let hybrid = hit_ids(&search(&app, &format!("query={}&limit=5&mode=hybrid", q(question))).await);
        assert!(hybrid.contains(&old), "hybrid, {question:?}");
    }
    // Each arm alone reaches it too: by its rare words, and by meaning.
    let words = hit_ids(&search(&app, "query=registry-creds&limit=5&mode=fulltext").await);
    assert_eq!(words.first(), Some(&old));
    // By meaning alone, by the questions whose words are not the routine
    // notes' own ("why did the deploy pipeline fail" is not: 2,500 notes
    // discount their common direction by 0.23, and it takes 0.4).
    for question in &QUESTIONS[1..] {
        let meaning = hit_ids(&search(&app, &format!("query={}&limit=5&mode=vector", q(question))).await);
        assert!(meaning.contains(&old), "vector, {question:?}: {meaning:?}");
    }
    // And every match of a common word is reachable by paging: none is cut.
    let mut seen = 0;
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => format!("query=pipeline&limit=100&mode=fulltext&cursor={c}"),
            None => "query=pipeline&limit=100&mode=fulltext".to_string(),
        };
        let page = search(&app, &params).await;
        seen += hit_ids(&page).len();
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let matching = app
        .count(&format!(
            "SELECT count(*) FROM observations WHERE project_id = '{}' AND narrative ILIKE '%pipeline%'",
            app.project_id
        ))
        .await;
    assert_eq!(seen as i64, matching, "every match of `pipeline` is on some page");
}

#[tokio::test]
async fn tenancy_states_and_as_of_hold_in_every_mode() {
    let app = spawn(true).await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    let other = app.create_project("elsewhere").await;
    let text = "Flaky test fixed: the websocket reconnect raced the heartbeat timer".to_string();
    let mine = seed(&app, Some(&embedder), app.project_id, &[(text.clone(), 2.0)]).await[0];
    let theirs = seed(&app, Some(&embedder), other, &[(text.clone(), 1.0)]).await[0];
    let archived = seed(
        &app,
        Some(&embedder),
        app.project_id,
        &[(format!("{text} (old copy)"), 3.0)],
    )
    .await[0];
    sqlx::query("UPDATE observations SET state = 'archived', state_changed_at = now() WHERE id = $1")
        .bind(archived)
        .execute(&app.pool)
        .await
        .unwrap();
    let before_mine = (Utc::now() - chrono::Duration::days(5)).to_rfc3339();
    for mode in ["fulltext", "vector", "hybrid"] {
        let found = hit_ids(
            &search(
                &app,
                &format!("query=websocket%20reconnect%20heartbeat&mode={mode}"),
            )
            .await,
        );
        assert_eq!(found, [mine], "{mode}: the project's own live memory only");
        let token = app
            .mint(json!({ "name": "other", "scopes": ["read"], "projectId": other }))
            .await;
        let (_, body) = app
            .get(
                &format!("/v1/search?query=websocket%20reconnect&mode={mode}&project={other}"),
                Some(&token),
            )
            .await;
        assert_eq!(hit_ids(&body), [theirs], "{mode}: {body}");
        let dated = hit_ids(
            &search(
                &app,
                &format!(
                    "query=websocket%20reconnect&mode={mode}&dateEnd={}",
                    q(&before_mine).replace('+', "%2B")
                ),
            )
            .await,
        );
        assert!(dated.is_empty(), "{mode}: written after dateEnd");
    }
}

#[tokio::test]
async fn a_second_replica_finds_a_new_memory_at_once_and_a_rebuild_equals_the_followed_index() {
    let app = spawn(true).await;
    let replica = cairn_retrieval::Engine::new(
        app.pool.clone(),
        cairn_retrieval::Config {
            model: Some(Embedder::local(&model_dir()).unwrap().model().to_string()),
            poll_interval: Duration::from_millis(200),
            ..Default::default()
        },
    );
    let _follow = replica.start();
    let filters = cairn_retrieval::Filters::default();
    let find = |text: &'static str| cairn_retrieval::Query {
        project_id: app.project_id,
        text,
        exclude: "",
        vector: None,
        filters: &filters,
        as_of: Utc::now() + chrono::Duration::minutes(1),
        summaries: true,
        mode: cairn_retrieval::Mode::Lexical,
        want: 10,
        lexical_weight: None,
    };
    // Indexed before the write: the replica learns of it from the feed.
    assert!(
        replica
            .search(&find("zeppelin"))
            .await
            .unwrap()
            .unwrap()
            .is_empty()
    );
    let (status, body) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({ "projectId": app.project_id.to_string(), "content": "The zeppelin cache warms at boot" }),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let id: Uuid = body["memory"]["id"].as_str().unwrap().parse().unwrap();
    let started = std::time::Instant::now();
    let hits = replica.search(&find("zeppelin")).await.unwrap().unwrap();
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), [id]);
    assert!(started.elapsed() < Duration::from_secs(2));
    // Found by meaning at once: the API embedded it with the write.
    let (live, _) = replica.compare_with_rebuild(app.project_id).await.unwrap();
    assert!(
        live.iter().any(|e| e.0 == id && e.4),
        "the vector came with the memory"
    );

    // Edits, state changes and deletions reach the replica through the feed.
    let others = seed(
        &app,
        None,
        app.project_id,
        &[
            ("one zeppelin".into(), 1.0),
            ("two zeppelins".into(), 1.0),
            ("three".into(), 1.0),
        ],
    )
    .await;
    let (status, _) = app
        .patch(
            &format!("/v1/memories/{id}"),
            Some(&app.admin_token),
            &json!({ "title": "The airship cache", "narrative": "The airship cache warms at boot" }),
        )
        .await;
    assert_eq!(status, 200);
    sqlx::query("UPDATE observations SET state = 'stale', state_changed_at = now() WHERE id = $1")
        .bind(others[0])
        .execute(&app.pool)
        .await
        .unwrap();
    let (status, _) = app
        .delete(&format!("/v1/memories/{}", others[1]), Some(&app.admin_token))
        .await;
    assert_eq!(status, 200);
    let hits = replica.search(&find("zeppelin")).await.unwrap().unwrap();
    assert_eq!(
        hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        [others[0]],
        "edited, stale, deleted"
    );
    let (live, rebuilt) = replica.compare_with_rebuild(app.project_id).await.unwrap();
    assert_eq!(
        live, rebuilt,
        "the followed index equals one rebuilt from Postgres"
    );
    assert_eq!(live.len(), 3);
    let stats = replica.stats();
    assert!(stats.bytes > 0 && stats.memories >= 3, "{stats:?}");
}

/// A search waits for a read of the feed that began after it did: with the
/// background poll slowed to a minute, a memory committed by another writer
/// just before is found by the very next search, in every mode.
#[tokio::test]
async fn a_memory_committed_before_a_search_is_found_by_it_in_every_mode() {
    let app = spawn_with(true, &[("CAIRN_INDEX_POLL_MS", "60000")]).await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    // Indexed, and the first poll done, before the writes.
    search(&app, "query=warmup&mode=fulltext").await;
    for (round, mode) in ["hybrid", "fulltext", "vector", "hybrid"].iter().enumerate() {
        let text = format!("The quokka{round} relay drops frames when the buffer fills");
        let ids = seed(&app, Some(&embedder), app.project_id, &[(text.clone(), 0.0)]).await;
        let query = match *mode {
            "vector" => text.replace(' ', "+"),
            _ => format!("quokka{round}"),
        };
        let body = search(&app, &format!("query={query}&mode={mode}")).await;
        assert_eq!(
            hit_ids(&body).first(),
            Some(&ids[0]),
            "{mode}: a memory committed before the search is its first hit: {body}"
        );
    }
}

/// The feed's poll (one per search, and the follower's) reads each
/// table's newest stamp from the end of its index, whatever the table's
/// statistics say: 200,000 rows loaded at once and never analysed, as after
/// a restore. The earlier `EXISTS (… WHERE index_tx >= $1)` scanned such a
/// table whole.
#[tokio::test]
async fn the_feed_poll_probes_an_index_on_a_large_table_never_analysed() {
    use cairn_retrieval::store::{pending, pending_sql};
    let app = spawn(false).await;
    sqlx::query(
        "INSERT INTO memory_index_deletions (memory_id, project_id, what)
         SELECT gen_random_uuid(), gen_random_uuid(), 'observation' FROM generate_series(1, 200000)",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    // A transaction id after the load's (the horizon would do in a quiet
    // cluster, but other tests' open transactions hold it back).
    let (after,): (i64,) = sqlx::query_as("SELECT pg_current_xact_id()::text::bigint")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(pending(&app.pool, 0).await.unwrap().1, "rows past cursor 0");
    assert!(
        !pending(&app.pool, after).await.unwrap().1,
        "nothing stamped after the load"
    );
    let (plan,): (Value,) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "EXPLAIN (FORMAT JSON) {}",
        pending_sql()
    )))
    .bind(after.to_string())
    .fetch_one(&app.pool)
    .await
    .unwrap();
    fn scans(node: &Value, out: &mut Vec<(String, String)>) {
        if let Some(table) = node["Relation Name"].as_str() {
            out.push((
                table.into(),
                node["Node Type"].as_str().unwrap_or_default().into(),
            ));
        }
        for key in ["Plan", "Plans"] {
            match &node[key] {
                Value::Array(children) => children.iter().for_each(|c| scans(c, out)),
                Value::Object(_) => scans(&node[key], out),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    plan.as_array().unwrap().iter().for_each(|p| scans(p, &mut found));
    let deletions: Vec<_> = found
        .iter()
        .filter(|(t, _)| t == "memory_index_deletions")
        .collect();
    assert!(
        !deletions.is_empty() && deletions.iter().all(|(_, node)| node.starts_with("Index")),
        "{found:?}"
    );
}

#[tokio::test]
async fn without_a_model_search_is_by_words_and_never_an_error() {
    let app = spawn(false).await;
    let old = seed(&app, None, app.project_id, &[(ROOT_CAUSE.to_string(), 400.0)]).await[0];
    seed(&app, None, app.project_id, &routine(300)).await;
    for mode in ["", "&mode=hybrid", "&mode=fulltext"] {
        let top = hit_ids(&search(&app, &format!("query={}&limit=5{mode}", q(QUESTIONS[0]))).await);
        assert_eq!(top.first(), Some(&old), "{mode}");
    }
    let (status, body) = app
        .get("/v1/search?query=deploy&mode=vector", Some(&app.ingest_token))
        .await;
    assert_eq!(status, 422, "{body}");
}

/// Each hit a search returns counts one retrieval (what keeps a used
/// memory ranked in context and out of the retention archive); the counts
/// of many reads are written together, within a few seconds.
#[tokio::test]
async fn every_search_hit_counts_a_retrieval_written_in_batches() {
    let app = spawn(false).await;
    let old = seed(&app, None, app.project_id, &[(ROOT_CAUSE.to_string(), 400.0)]).await[0];
    let routine = seed(&app, None, app.project_id, &routine(20)).await;
    for _ in 0..3 {
        let top = hit_ids(&search(&app, &format!("query={}&limit=1", q(QUESTIONS[2]))).await);
        assert_eq!(top, [old]);
    }
    let count = |id: Uuid| {
        let pool = app.pool.clone();
        async move {
            sqlx::query_scalar::<_, i32>(
                "SELECT retrieved_count FROM memory_retrievals WHERE observation_id = $1",
            )
            .bind(id)
            .fetch_optional(&pool)
            .await
            .unwrap()
        }
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count(old).await != Some(3) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(count(old).await, Some(3), "three searches, three retrievals");
    // Memories no search returned are not counted.
    assert_eq!(count(routine[0]).await, None);
    // A flush (as at shutdown) writes what is held at once, not at the next second.
    hit_ids(&search(&app, &format!("query={}&limit=1", q(QUESTIONS[2]))).await);
    app.state.retrievals.flush().await;
    assert_eq!(count(old).await, Some(4), "written by the flush");
}

/// A server that shuts down writes the retrieval counts it holds before it
/// returns, rather than leaving them to a timer that will not fire again.
#[tokio::test]
async fn a_shutdown_writes_the_retrieval_counts_it_holds() {
    let app = spawn(false).await;
    let old = seed(&app, None, app.project_id, &[(ROOT_CAUSE.to_string(), 400.0)]).await[0];
    // A second server over the same database, with a shutdown the test controls.
    let (base, stop, server) = crate::helpers::server_until_stopped(&app).await;
    let body: Value = app
        .client
        .get(format!("{base}/v1/search?query={}&limit=1", q(QUESTIONS[2])))
        .bearer_auth(&app.ingest_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(hit_ids(&body), [old]);
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    let count: Option<i32> =
        sqlx::query_scalar("SELECT retrieved_count FROM memory_retrievals WHERE observation_id = $1")
            .bind(old)
            .fetch_optional(&app.pool)
            .await
            .unwrap();
    assert_eq!(count, Some(1), "written before the server returned");
}

const UNRELATED_PROMPTS: [&str; 8] = [
    "write a haiku about autumn leaves",
    "add a dark mode toggle to the settings page",
    "what is the capital of France",
    "refactor the date formatting helper to use chrono",
    "explain how binary search works",
    "bump the eslint version and fix the lint warnings",
    "rename the variable foo to bar in utils.py",
    "add unit tests for the markdown parser",
];
const RELATED_PROMPTS: [&str; 4] = [
    "Deploys fail again with an auth error pulling images. Have we seen this before?",
    "the registry-creds secret expired again, how did we fix it last time?",
    "image pull fails in the deploy pipeline: unauthorized from the container registry",
    "how do we rotate the registry credentials?",
];

/// What UserPromptSubmit adds for `prompt` (related memories are on by default).
async fn injected(app: &TestApp, session: &str, prompt: &str) -> String {
    let (status, answer) = app
        .hook(crate::helpers::cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": prompt }),
        ))
        .await;
    assert_eq!(status, 200, "{answer}");
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn the_prompt_gate_injects_related_memory_and_nothing_for_unrelated_prompts() {
    // Two shared cores run the whole suite: the deadline is not what is tested here.
    let app = spawn_with(true, &[("CAIRN_PROMPT_CONTEXT_DEADLINE_MS", "5000")]).await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    seed(
        &app,
        Some(&embedder),
        app.project_id,
        &[(ROOT_CAUSE.to_string(), 60.0)],
    )
    .await;
    seed(&app, Some(&embedder), app.project_id, &routine(400)).await;
    let varied: Vec<(String, f64)> = [
        "Chose Postgres over MySQL for JSONB columns and GIN indexes",
        "The rate limiter uses a token bucket per token and per IP",
        "Parser panicked on empty input; now returns early",
        "Nightly build: the linker ran out of memory, lowered codegen units",
        "Session TTL raised to 8 hours in src/auth/session.ts",
    ]
    .iter()
    .map(|t| (t.to_string(), 10.0))
    .collect();
    seed(&app, Some(&embedder), app.project_id, &varied).await;
    for (i, prompt) in UNRELATED_PROMPTS.iter().enumerate() {
        let added = injected(&app, &format!("gate-u{i}"), prompt).await;
        assert!(added.is_empty(), "unrelated {prompt:?} injected: {added}");
    }
    for (i, prompt) in RELATED_PROMPTS.iter().enumerate() {
        let added = injected(&app, &format!("gate-r{i}"), prompt).await;
        assert!(added.contains("registry-creds"), "related {prompt:?}: {added:?}");
        assert!(
            added.chars().count() <= 2_000,
            "within ~500 tokens: {}",
            added.chars().count()
        );
    }
}

#[tokio::test]
async fn feedback_moves_a_memory_in_its_project_is_audited_and_bounded_by_tenancy() {
    let app = spawn(false).await;
    let texts = [
        ("The cache key includes the tenant id".to_string(), 1.0),
        ("The cache key includes the tenant id and region".to_string(), 1.0),
    ];
    let seeded = seed(&app, None, app.project_id, &texts).await;
    let top = |body: Value| hit_ids(&body)[0];
    let first = top(search(&app, "query=cache%20key%20tenant&mode=fulltext").await);
    let other = if first == seeded[0] { seeded[1] } else { seeded[0] };
    // Misleading: the first drops below the other.
    let (status, body) = app
        .post(
            &format!("/v1/memories/{first}/feedback"),
            Some(&app.ingest_token),
            &json!({ "verdict": "misleading", "note": "the region was dropped" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["helpful"].as_i64(), body["misleading"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        top(search(&app, "query=cache%20key%20tenant&mode=fulltext").await),
        other
    );
    // Helpful marks bring it back.
    for _ in 0..8 {
        let (status, _) = app
            .post(
                &format!("/v1/memories/{first}/feedback"),
                Some(&app.ingest_token),
                &json!({ "verdict": "helpful" }),
            )
            .await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        top(search(&app, "query=cache%20key%20tenant&mode=fulltext").await),
        first
    );
    let audited = app
        .count(&format!(
            "SELECT count(*) FROM audit_log WHERE action = 'memory.feedback' AND target_id = '{first}'"
        ))
        .await;
    assert_eq!(audited, 9);
    // The counts and the marks, newest first, by the token's name.
    let (status, listed) = app
        .get(&format!("/v1/memories/{first}/feedback"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        (listed["helpful"].as_i64(), listed["misleading"].as_i64()),
        (Some(8), Some(1))
    );
    let marks = listed["marks"].as_array().unwrap();
    assert_eq!(marks.len(), 9);
    assert_eq!(marks[0]["verdict"], "helpful");
    assert_eq!(marks[8]["verdict"], "misleading");
    assert_eq!(marks[8]["note"], "the region was dropped");
    assert!(
        marks[8]["markedBy"].as_str().is_some_and(|n| !n.is_empty()),
        "{}",
        marks[8]
    );
    // Bad verdicts, unknown memories and other projects' memories.
    let (status, body) = app
        .post(
            &format!("/v1/memories/{first}/feedback"),
            Some(&app.ingest_token),
            &json!({ "verdict": "meh" }),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_field"))
    );
    let other_project = app.create_project("fb-other").await;
    let theirs = seed(&app, None, other_project, &[("elsewhere".to_string(), 1.0)]).await[0];
    let (status, _) = app
        .post(
            &format!("/v1/memories/{theirs}/feedback"),
            Some(&app.ingest_token),
            &json!({ "verdict": "helpful" }),
        )
        .await;
    assert_eq!(
        status, 404,
        "a project token cannot mark another project's memory"
    );
    let (status, _) = app
        .get(
            &format!("/v1/memories/{theirs}/feedback"),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 404, "nor read its feedback");
    let (status, _) = app
        .post(
            &format!("/v1/memories/{}/feedback", Uuid::now_v7()),
            Some(&app.ingest_token),
            &json!({ "verdict": "helpful" }),
        )
        .await;
    assert_eq!(status, 404);
}

/// A session made by the database directly, on `branch`.
async fn session_on(app: &TestApp, branch: &str) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, cwd, branch)
         VALUES ($1, $2, $3, 'claude-code', $1::text, '/home/dev/app', $4)",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(branch)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

/// An observation of `session` made by the database directly, `minutes_ago`.
async fn observe(
    app: &TestApp,
    session: Uuid,
    title: &str,
    files_modified: &[&str],
    minutes_ago: i32,
) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, narrative,
             files_modified, provider, model, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'test:' || $1, 'change', $5, 'Narrative of ' || $5, $6,
                 'heuristic', 'none', now() - $7 * interval '1 minute', now())",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(session)
    .bind(title)
    .bind(files_modified)
    .bind(minutes_ago)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

/// The "In detail" part of the context a new Claude Code session gets with `query`.
async fn detailed_at_start(app: &TestApp, session: &str, query: &str) -> String {
    let res = app
        .client
        .post(format!("{}/v1/hooks/claude-code?{query}", app.base))
        .bearer_auth(&app.ingest_token)
        .json(&crate::helpers::cc(
            session,
            "SessionStart",
            json!({ "source": "startup" }),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    let context = body["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    context
        .split("## In detail")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn session_start_puts_the_branchs_earlier_work_first() {
    let app = spawn(false).await;
    let feature = session_on(&app, "feat/cache-eviction").await;
    let main = session_on(&app, "main").await;
    observe(&app, feature, "LRU eviction keyed by tenant", &[], 3 * 24 * 60).await;
    for i in 0..12 {
        observe(&app, main, &format!("Routine change {i}"), &[], i).await;
    }
    let on_feature = detailed_at_start(&app, "branch-a", "branch=feat%2Fcache-eviction").await;
    assert!(
        on_feature.contains("LRU eviction keyed by tenant"),
        "{on_feature}"
    );
    // On main nothing marks it: the newest work is detailed instead.
    let on_main = detailed_at_start(&app, "branch-b", "branch=main").await;
    assert!(!on_main.contains("LRU eviction keyed by tenant"), "{on_main}");
    assert!(on_main.contains("Routine change 0"), "{on_main}");
}

#[tokio::test]
async fn session_start_puts_memories_of_the_worktrees_changed_files_first() {
    let app = spawn(false).await;
    let main = session_on(&app, "main").await;
    // Stored as the agent gave them: one absolute, one relative.
    observe(
        &app,
        main,
        "Eviction clock skew fixed",
        &["/home/dev/app/src/cache/lru.rs"],
        5 * 24 * 60,
    )
    .await;
    observe(&app, main, "Pool size raised", &["src/db/pool.rs"], 4 * 24 * 60).await;
    observe(&app, main, "Unrelated older note", &["docs/old.md"], 6 * 24 * 60).await;
    for i in 0..12 {
        observe(&app, main, &format!("Routine change {i}"), &["README.md"], i).await;
    }
    let with_changes = detailed_at_start(
        &app,
        "changed-a",
        "branch=main&repoRoot=%2Fhome%2Fdev%2Fapp&changed=src%2Fcache%2Flru.rs%0Asrc%2Fdb%2Fpool.rs",
    )
    .await;
    assert!(
        with_changes.contains("Eviction clock skew fixed"),
        "{with_changes}"
    );
    assert!(with_changes.contains("Pool size raised"), "{with_changes}");
    assert!(!with_changes.contains("Unrelated older note"), "{with_changes}");
    // Without them the newest work is detailed; blank and oversized lines are ignored.
    let without = detailed_at_start(&app, "changed-b", "branch=main&changed=%0A%20").await;
    assert!(!without.contains("Eviction clock skew fixed"), "{without}");
    assert!(without.contains("Routine change 0"), "{without}");
}
