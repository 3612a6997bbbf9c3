//! Vector and hybrid search (`mode`): a question that shares no word with a
//! memory finds it by meaning; filters, cursor pages and project bounds hold
//! in every mode; without a model, search is full-text and `vector` is refused.

use std::path::PathBuf;

use cairn_embed::Embedder;
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{Options, TestApp, cc, found, hit_ids, model_dir, search, spawn_app_with};

/// An API with embeddings on (or off: a model directory that does not exist).
async fn spawn(embeddings: bool) -> TestApp {
    let dir = if embeddings {
        model_dir()
    } else {
        PathBuf::from("/nonexistent/cairn-model")
    };
    spawn_app_with(Options {
        extra: vec![
            ("CAIRN_EMBED_PROVIDER", "local".into()),
            ("CAIRN_EMBED_MODEL_DIR", dir.display().to_string()),
            // Two shared cores run the whole suite: the deadline is not what is tested here.
            ("CAIRN_PROMPT_CONTEXT_DEADLINE_MS", "5000".into()),
        ],
        ..Options::default()
    })
    .await
}

struct Seeder {
    embedder: Embedder,
}

impl Seeder {
    /// The linker failure (a day and more old) among the `OTHERS` (the
    /// newest hours): the memory a paraphrased question should find. Its id.
    async fn linker_among_others(&self, app: &TestApp, at: DateTime<Utc>) -> Uuid {
        let linker = self
            .observation(
                app,
                app.project_id,
                "bugfix",
                LINKER.0,
                LINKER.1,
                at - Duration::hours(30),
            )
            .await;
        for (i, (title, narrative)) in OTHERS.iter().enumerate() {
            self.observation(
                app,
                app.project_id,
                "decision",
                title,
                narrative,
                at - Duration::hours(i as i64),
            )
            .await;
        }
        linker
    }

    fn new() -> Self {
        Self {
            embedder: Embedder::local(&model_dir()).unwrap(),
        }
    }

    /// An observation (kind, title, narrative) `hours_ago` before `at`, with
    /// its vector as the generator would store it.
    async fn observation(
        &self,
        app: &TestApp,
        project_id: Uuid,
        kind: &str,
        title: &str,
        narrative: &str,
        at: DateTime<Utc>,
    ) -> Uuid {
        let id = Uuid::now_v7();
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative,
                 provider, model, created_at, updated_at)
             VALUES ($1, $2, $3, 'test:' || $1, $4, $5, $6, 'heuristic', 'none', $7, $7)",
        )
        .bind(id)
        .bind(app.team_id)
        .bind(project_id)
        .bind(kind)
        .bind(title)
        .bind(narrative)
        .bind(at)
        .execute(&app.pool)
        .await
        .unwrap();
        let vector = self
            .embedder
            .embed_one(&format!("{title}\n{narrative}"))
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(project_id)
        .bind(self.embedder.model())
        .bind(vector.len() as i32)
        .bind(&vector)
        .execute(&app.pool)
        .await
        .unwrap();
        id
    }
}

const LINKER: (&str, &str) = (
    "Nightly build failed: the linker ran out of memory",
    "The release link step was killed by the OOM killer; lowered codegen units.",
);
/// Shares no word (nor stem) with LINKER.
const QUESTION: &str = "why did yesterday's CI job crash";

const OTHERS: [(&str, &str); 4] = [
    (
        "We chose Postgres over MySQL for JSONB",
        "Document columns and GIN indexes decided it.",
    ),
    (
        "Dark mode toggle added to settings",
        "A switch in the preferences page persists the theme.",
    ),
    (
        "Parser panics on empty input",
        "Indexing past the end of an empty token list; now returns early.",
    ),
    (
        "Rate limiter uses a token bucket",
        "Per-token and per-IP buckets, refilled every second.",
    ),
];

#[tokio::test]
async fn a_question_with_no_shared_word_is_found_by_meaning_not_by_words() {
    let app = spawn(true).await;
    let seed = Seeder::new();
    let at = Utc::now() - Duration::minutes(1);
    let linker = seed.linker_among_others(&app, at).await;
    let q = "query=why%20did%20yesterday%27s%20CI%20job%20crash";
    assert!(
        found(&app, &format!("{q}&mode=fulltext")).await.is_empty(),
        "{QUESTION}: no shared word"
    );
    let vector = search(&app, &format!("{q}&mode=vector")).await;
    assert_eq!(hit_ids(&vector).first(), Some(&linker), "{vector}");
    let similarity = vector["results"][0]["score"].as_f64().unwrap();
    assert!(similarity > 0.25 && similarity <= 1.0, "{similarity}");
    assert_eq!(
        found(&app, &format!("{q}&mode=hybrid")).await.first(),
        Some(&linker)
    );
    // Hybrid is the default with embeddings.
    assert_eq!(found(&app, q).await.first(), Some(&linker));
    // An excluded word leaves a memory out in every mode.
    for mode in ["vector", "hybrid"] {
        let without = found(&app, &format!("{q}%20-linker&mode={mode}")).await;
        assert!(!without.contains(&linker), "{mode}: {without:?}");
    }
    // A word match still counts in hybrid: the memory matched by words and meaning comes first.
    let both = found(&app, "query=postgres%20database%20choice&mode=hybrid").await;
    let postgres = found(&app, "query=postgres&mode=fulltext").await;
    assert_eq!(postgres.len(), 1);
    assert_eq!(both.first(), postgres.first());
}

#[tokio::test]
async fn filters_pages_and_project_bounds_hold_in_every_mode() {
    let app = spawn(true).await;
    let seed = Seeder::new();
    let at = Utc::now() - Duration::minutes(1);
    let (status, other) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "elsewhere"}),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let other_project: Uuid = other["project"]["id"].as_str().unwrap().parse().unwrap();
    let mut bugfixes = vec![];
    let mut all = vec![];
    for i in 0..12 {
        let kind = if i % 3 == 0 { "bugfix" } else { "feature" };
        let id = seed
            .observation(
                &app,
                app.project_id,
                kind,
                &format!("Build cache fix number {i}"),
                "The compiler cache was invalidated on every build; keyed it by the lockfile.",
                at - Duration::hours(i),
            )
            .await;
        if kind == "bugfix" {
            bugfixes.push(id);
        }
        all.push(id);
    }
    // The same text in another project: never found from this one.
    let foreign = seed
        .observation(
            &app,
            other_project,
            "bugfix",
            "Build cache fix number 0",
            "The compiler cache was invalidated on every build; keyed it by the lockfile.",
            at,
        )
        .await;
    let q = "query=build%20cache%20invalidated";
    let mut late = vec![];
    for mode in ["fulltext", "vector", "hybrid"] {
        let every = found(&app, &format!("{q}&mode={mode}&limit=100")).await;
        assert_eq!(
            sorted(every.clone()),
            sorted(all.clone()),
            "{mode}: every memory, once"
        );
        assert!(!every.contains(&foreign), "{mode}");
        let filtered = found(&app, &format!("{q}&mode={mode}&type=bugfix&limit=100")).await;
        assert_eq!(
            sorted(filtered),
            sorted(bugfixes.clone()),
            "{mode}: the type filter"
        );
        let since = (at - Duration::hours(2)).timestamp_millis();
        let recent = found(&app, &format!("{q}&mode={mode}&dateStart={since}&limit=100")).await;
        let expected = all[..3].iter().chain(&late).copied().collect();
        assert_eq!(sorted(recent), sorted(expected), "{mode}: the date filter");

        // Pages of 5 walk the same list, each hit once, and a memory that
        // arrives meanwhile does not shift them.
        let mut walked = vec![];
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = match &cursor {
                Some(c) => format!("{q}&mode={mode}&limit=5&cursor={c}"),
                None => format!("{q}&mode={mode}&limit=5"),
            };
            let body = search(&app, &params).await;
            walked.extend(hit_ids(&body));
            pages += 1;
            if pages == 1 {
                let id = seed
                    .observation(
                        &app,
                        app.project_id,
                        "bugfix",
                        &format!("Build cache fix, late ({mode})"),
                        "The compiler cache was invalidated again.",
                        Utc::now(),
                    )
                    .await;
                late.push(id);
            }
            match body["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
            assert!(pages < 10);
        }
        assert_eq!(pages, 3, "{mode}");
        assert_eq!(walked, every, "{mode}: the pages are the one list, in order");
        all.push(*late.last().unwrap());
        bugfixes.push(*late.last().unwrap());
    }
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

#[tokio::test]
async fn without_a_model_search_is_full_text_and_vector_is_refused() {
    let app = spawn(false).await;
    let seed = Seeder::new();
    let at = Utc::now() - Duration::minutes(1);
    let linker = seed
        .observation(&app, app.project_id, "bugfix", LINKER.0, LINKER.1, at)
        .await;
    let q = "query=linker%20memory";
    let default = found(&app, q).await;
    assert_eq!(default, [linker]);
    assert_eq!(
        found(&app, &format!("{q}&mode=hybrid")).await,
        default,
        "hybrid falls back to full-text"
    );
    assert_eq!(found(&app, &format!("{q}&mode=fulltext")).await, default);
    assert!(
        found(&app, "query=why%20did%20yesterday%27s%20CI%20job%20crash")
            .await
            .is_empty(),
        "no meaning without a model"
    );
    let (status, body) = app
        .get(&format!("/v1/search?{q}&mode=vector"), Some(&app.ingest_token))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_field")),
        "{body}"
    );
    let (status, body) = app
        .get(&format!("/v1/search?{q}&mode=fuzzy"), Some(&app.ingest_token))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_field")),
        "{body}"
    );
}

#[tokio::test]
async fn vector_hits_of_another_model_are_ignored() {
    let app = spawn(true).await;
    let seed = Seeder::new();
    let at = Utc::now() - Duration::minutes(1);
    let linker = seed
        .observation(&app, app.project_id, "bugfix", LINKER.0, LINKER.1, at)
        .await;
    let q = "query=why%20did%20yesterday%27s%20CI%20job%20crash&mode=vector";
    // The index is built with the vector first; each change of model below
    // must then reach it through the feed (migration 0032), in both directions.
    assert_eq!(found(&app, q).await, [linker]);
    let ours: String = sqlx::query_scalar("SELECT model FROM observation_embeddings")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE observation_embeddings SET model = 'some-older-model'")
        .execute(&app.pool)
        .await
        .unwrap();
    assert!(
        found(&app, q).await.is_empty(),
        "a vector of another model is not compared"
    );
    sqlx::query("UPDATE observation_embeddings SET model = $1")
        .bind(&ours)
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(found(&app, q).await, [linker]);
}

/// What UserPromptSubmit adds for `prompt` once the project opts in.
async fn related(app: &TestApp, prompt: &str) -> String {
    sqlx::query("UPDATE projects SET prompt_context = true WHERE id = $1")
        .bind(app.project_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let (status, answer) = app
        .hook(cc("rp-hybrid", "UserPromptSubmit", json!({ "prompt": prompt })))
        .await;
    assert_eq!(status, 200, "{answer}");
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn prompts_and_context_queries_find_memories_by_meaning_with_a_model_only() {
    for embeddings in [true, false] {
        let app = spawn(embeddings).await;
        let seed = Seeder::new();
        let at = Utc::now() - Duration::minutes(1);
        seed.linker_among_others(&app, at).await;
        // The question is only loosely related in meaning (cosine ~0.25, where
        // unrelated prompts also land): the relevance gate keeps it out of an
        // unasked injection; an explicit query below still finds it.
        let added = related(&app, QUESTION).await;
        assert!(
            !added.contains("linker ran out of memory"),
            "embeddings {embeddings}: {added}"
        );
        assert!(!added.contains("Dark mode"), "only what is related: {added}");
        // A word match is still found, with or without a model.
        assert!(
            related(&app, "which token bucket does the rate limiter use")
                .await
                .contains("token bucket")
        );

        let (status, context) = app
            .get(
                &format!(
                    "/v1/projects/{}/context?query=why%20did%20yesterday%27s%20CI%20job%20crash&format=markdown",
                    app.project_id
                ),
                Some(&app.ingest_token),
            )
            .await;
        assert_eq!(status, 200, "{context}");
        let text = context.to_string();
        let in_detail = text.contains("OOM killer");
        assert_eq!(
            in_detail, embeddings,
            "embeddings {embeddings}: the linker memory in full: {context}"
        );
    }
}
