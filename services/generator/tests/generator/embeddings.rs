//! The generator embeds what it writes: each observation and summary gets
//! its vector in the same transaction; a missing model or a failing
//! endpoint never fails a job (the rows are written without vectors), and
//! the backfill adds the missing vectors later.

use cairn_embed::Embedder;
use cairn_generator::embed::{backfill_batch, backfill_pass, observation_text, summary_text};
use cairn_testkit::{TestApp, model_dir, spawn_app};
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::method};

use super::support::{MINUTE, post_turn, rows, start, wait_count};

fn completed(app: &TestApp) -> String {
    format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    )
}

/// An observation's title, subtitle, facts, narrative; its vector's model, dims, values.
type ObservationRow = (String, String, Vec<String>, String, String, i32, Vec<f32>);
/// A summary's request, investigated, learned, completed, next steps; its vector's model, dims, values.
type SummaryRow = (String, String, String, String, String, String, i32, Vec<f32>);

/// Each observation's and summary's stored vector next to the text it should be the embedding of.
async fn stored(app: &TestApp) -> Vec<(String, String, i32, Vec<f32>)> {
    let observations: Vec<ObservationRow> = sqlx::query_as(
        "SELECT o.title, o.subtitle, o.facts, o.narrative, e.model, e.dims, e.embedding
         FROM observations o JOIN observation_embeddings e ON e.observation_id = o.id
         WHERE o.project_id = $1 AND e.project_id = $1",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let summaries: Vec<SummaryRow> = sqlx::query_as(
        "SELECT s.request, s.investigated, s.learned, s.completed, s.next_steps, e.model, e.dims, e.embedding
         FROM summaries s JOIN summary_embeddings e ON e.summary_id = s.id
         WHERE s.project_id = $1 AND e.project_id = $1",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    observations
        .into_iter()
        .map(|(t, st, f, n, m, d, v)| (observation_text(&t, &st, &f, &n), m, d, v))
        .chain(
            summaries
                .into_iter()
                .map(|(r, i, l, c, ns, m, d, v)| (summary_text(&r, &i, &l, &c, &ns), m, d, v)),
        )
        .collect()
}

async fn embeddings(app: &TestApp) -> i64 {
    rows(app, "observation_embeddings").await + rows(app, "summary_embeddings").await
}

/// Vectors of the project stored with a reading other than `reading`.
async fn older_readings(app: &TestApp, reading: i16) -> i64 {
    app.count(&format!(
        "SELECT (SELECT count(*) FROM observation_embeddings WHERE project_id = '{0}' AND reading <> {1})
              + (SELECT count(*) FROM summary_embeddings WHERE project_id = '{0}' AND reading <> {1})",
        app.project_id, reading
    ))
    .await
}

async fn memories(app: &TestApp) -> i64 {
    rows(app, "observations").await + rows(app, "summaries").await
}

#[tokio::test]
async fn every_observation_and_summary_is_written_with_its_vector() {
    let app = spawn_app().await;
    post_turn(&app, "s-embed", "fix the parser panic on empty input").await;
    let dir = model_dir().display().to_string();
    let generator = start(&app, &[("CAIRN_EMBED_MODEL_DIR", &dir)]);
    wait_count(&app.pool, &completed(&app), 2, MINUTE).await;
    generator.stop().await;
    let written = memories(&app).await;
    assert!(written >= 2, "an observation and a turn summary at least");
    let vectors = stored(&app).await;
    let listed: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT 'observation', title, EXISTS (SELECT 1 FROM observation_embeddings e WHERE e.observation_id = o.id)
         FROM observations o WHERE project_id = $1
         UNION ALL
         SELECT 'summary ' || scope, request, EXISTS (SELECT 1 FROM summary_embeddings e WHERE e.summary_id = s.id)
         FROM summaries s WHERE project_id = $1",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        vectors.len() as i64,
        written,
        "every row has its vector: {listed:?}"
    );
    let embedder = Embedder::local(&model_dir()).unwrap();
    assert_eq!(
        older_readings(&app, embedder.reading()).await,
        0,
        "each vector is stored with the reading that made it"
    );
    for (text, model, dims, vector) in vectors {
        assert_eq!((model.as_str(), dims), ("all-MiniLM-L6-v2", 384));
        let expected = embedder.embed_one(&text).await.unwrap();
        let similarity = cairn_embed::dot(&expected, &vector);
        assert!(
            similarity > 0.9999,
            "the vector is the embedding of the row's text ({similarity}): {text}"
        );
    }
}

#[tokio::test]
async fn a_missing_model_writes_rows_without_vectors_and_the_backfill_adds_them() {
    let app = spawn_app().await;
    post_turn(&app, "s-nomodel", "fix the parser panic on empty input").await;
    let generator = start(&app, &[("CAIRN_EMBED_MODEL_DIR", "/nonexistent/cairn-model")]);
    wait_count(&app.pool, &completed(&app), 2, MINUTE).await;
    generator.stop().await;
    let written = memories(&app).await;
    assert!(written >= 2);
    assert_eq!(embeddings(&app).await, 0);
    let failed: i64 = app
        .count(&format!(
            "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status <> 'completed'",
            app.project_id
        ))
        .await;
    assert_eq!(failed, 0);

    let embedder = Embedder::local(&model_dir()).unwrap();
    assert_eq!(
        backfill_batch(&app.pool, &embedder).await.unwrap() as i64,
        written
    );
    assert_eq!(embeddings(&app).await, written);
    assert_eq!(
        backfill_batch(&app.pool, &embedder).await.unwrap(),
        0,
        "nothing left"
    );
    for (text, _, _, vector) in stored(&app).await {
        let expected = embedder.embed_one(&text).await.unwrap();
        assert!(cairn_embed::dot(&expected, &vector) > 0.9999, "{text}");
    }
}

/// A manual memory's vector, reading and feed stamp.
async fn vector_of(app: &TestApp, id: &str) -> (Vec<f32>, i16, String) {
    sqlx::query_as(
        "SELECT embedding, reading, index_tx::text FROM observation_embeddings WHERE observation_id = $1::uuid",
    )
    .bind(id)
    .fetch_one(&app.pool)
    .await
    .unwrap()
}

/// Vectors written before texts were read past their first window (reading
/// 1) are re-read by the backfill: a long memory is embedded again, to its
/// end, and reaches the index through the feed; a short one, which the new
/// reading reads the same, only has its reading raised, its vector and its
/// feed stamp untouched.
#[tokio::test]
async fn the_backfill_re_reads_vectors_of_an_older_reading() {
    let app = spawn_app().await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    let long = (0..15)
        .map(|i| {
            format!("Step {i} of the quarterly sales report: exported the figures and checked the totals.")
        })
        .chain((0..6).map(|i| {
            format!(
                "Incident {i}: the deploy pipeline failed pulling container images because the Kubernetes \
                 secret registry-creds had expired; rotated it with scripts/rotate-registry.sh."
            )
        }))
        .collect::<Vec<_>>()
        .join(" ");
    let short = "Login tokens expire after 30 minutes.";
    let mut ids = vec![];
    for content in [long.as_str(), short] {
        let (status, res) = app
            .post(
                "/v1/memories",
                Some(&app.admin_token),
                &serde_json::json!({"projectId": app.project_id, "content": content}),
            )
            .await;
        assert_eq!(status, 201, "{res}");
        ids.push(res["memory"]["id"].as_str().unwrap().to_string());
    }
    while backfill_batch(&app.pool, &embedder).await.unwrap() > 0 {}
    assert_eq!(older_readings(&app, embedder.reading()).await, 0);

    // As an earlier Cairn left them: the long memory's vector read from its
    // first window only, the short one's a stand-in that no reading makes.
    let text = |id: &str| {
        let pool = app.pool.clone();
        let id = id.to_string();
        async move {
            let (title, content): (String, String) =
                sqlx::query_as("SELECT title, content FROM observations WHERE id = $1::uuid")
                    .bind(id)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
            observation_text(&title, "", &[], &content)
        }
    };
    let long_text = text(&ids[0]).await;
    let first_window = embedder.embed_query(&long_text).await.unwrap();
    let to_its_end = embedder.embed_one(&long_text).await.unwrap();
    let same = cairn_embed::dot(&first_window, &to_its_end);
    assert!(
        same < 0.95,
        "the long memory reads differently past its first window ({same})"
    );
    let stand_in = first_window.clone();
    for (id, vector) in [(&ids[0], &first_window), (&ids[1], &stand_in)] {
        sqlx::query(
            "UPDATE observation_embeddings SET embedding = $2, reading = 1 WHERE observation_id = $1::uuid",
        )
        .bind(id)
        .bind(vector)
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let (_, _, long_stamp) = vector_of(&app, &ids[0]).await;
    let (_, _, short_stamp) = vector_of(&app, &ids[1]).await;

    assert_eq!(backfill_batch(&app.pool, &embedder).await.unwrap(), 2);
    assert_eq!(
        backfill_batch(&app.pool, &embedder).await.unwrap(),
        0,
        "nothing left"
    );
    let (vector, reading, stamp) = vector_of(&app, &ids[0]).await;
    assert_eq!(reading, embedder.reading());
    assert!(
        cairn_embed::dot(&vector, &to_its_end) > 0.9999,
        "embedded again, to its end"
    );
    assert_ne!(stamp, long_stamp, "the new vector reaches the retrieval feed");
    let (vector, reading, stamp) = vector_of(&app, &ids[1]).await;
    assert_eq!(reading, embedder.reading());
    assert_eq!(vector, stand_in, "a text of one window is not embedded again");
    assert_eq!(
        stamp, short_stamp,
        "raising a reading alone is not fed to the index"
    );
}

/// Of several generators, one backfills at a time: while another holds the
/// turn a pass does nothing, and once it is given back a pass embeds.
#[tokio::test]
async fn one_generator_backfills_at_a_time() {
    let app = spawn_app().await;
    let embedder = Embedder::local(&model_dir()).unwrap();
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &serde_json::json!({"projectId": app.project_id, "content": "The staging database is reset every Sunday night."}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    sqlx::query("DELETE FROM observation_embeddings")
        .execute(&app.pool)
        .await
        .unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();

    let other = cairn_core::store::embeddings::backfill_turn(&app.pool)
        .await
        .unwrap()
        .expect("the turn is free");
    assert!(
        cairn_core::store::embeddings::backfill_turn(&app.pool)
            .await
            .unwrap()
            .is_none(),
        "held by the other"
    );
    assert_eq!(backfill_pass(&app.pool, &embedder, &shutdown).await, None);
    assert_eq!(
        embeddings(&app).await,
        0,
        "nothing embedded while the other has the turn"
    );

    other.end().await;
    assert_eq!(backfill_pass(&app.pool, &embedder, &shutdown).await, Some(1));
    assert_eq!(embeddings(&app).await, 1);
    // The pass gave its turn back.
    assert_eq!(backfill_pass(&app.pool, &embedder, &shutdown).await, Some(0));
}

#[tokio::test]
async fn a_failing_embedding_endpoint_never_fails_a_job() {
    let app = spawn_app().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    post_turn(&app, "s-endpoint-down", "fix the parser panic on empty input").await;
    let base = format!("{}/v1", server.uri());
    let generator = start(
        &app,
        &[
            ("CAIRN_EMBED_PROVIDER", "openai"),
            ("CAIRN_EMBED_BASE_URL", &base),
            ("CAIRN_EMBED_TIMEOUT_MS", "500"),
        ],
    );
    wait_count(&app.pool, &completed(&app), 2, MINUTE).await;
    generator.stop().await;
    assert!(memories(&app).await >= 2);
    assert_eq!(embeddings(&app).await, 0);
    assert!(
        !server.received_requests().await.unwrap().is_empty(),
        "the endpoint was asked"
    );
}
