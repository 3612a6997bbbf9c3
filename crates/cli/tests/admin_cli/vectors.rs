//! Imported memory gets its vectors from the generator's backfill (here
//! against a local OpenAI-compatible embeddings mock), like any row written
//! without one.

use cairn_embed::{DIMS, EmbedConfig, Embedder};
use cairn_testkit::spawn_app;
use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, Request, ResponseTemplate,
    matchers::{method, path},
};

/// One unit vector per input text.
fn embeddings(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let n = body["input"].as_array().map_or(0, Vec::len);
    let data: Vec<Value> = (0..n)
        .map(|i| {
            let mut v = vec![0.0f32; DIMS];
            v[i % DIMS] = 1.0;
            json!({"object": "embedding", "index": i, "embedding": v})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({"object": "list", "data": data, "model": "embed-small"}))
}

#[tokio::test(flavor = "multi_thread")]
async fn imported_observations_and_summaries_get_vectors_from_the_backfill() {
    let app = spawn_app().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(embeddings)
        .mount(&server)
        .await;
    let embedder = Embedder::from_config(&EmbedConfig::from_lookup(|k| match k {
        "CAIRN_EMBED_PROVIDER" => Some("openai".into()),
        "CAIRN_EMBED_BASE_URL" => Some(format!("{}/v1/", server.uri())),
        "CAIRN_EMBED_MODEL" => Some("embed-small".into()),
        _ => None,
    }))
    .expect("configured");

    let session = uuid::Uuid::new_v4();
    let lines = [
        json!({"type": "session", "id": session, "agent": "claude-code", "externalSessionId": "s-1",
               "startedAtEpoch": 1_770_000_000_000i64}),
        json!({"type": "observation", "id": uuid::Uuid::new_v4(), "sessionId": session, "kind": "decision",
               "title": "Vectors for imported rows", "createdAtEpoch": 1_770_000_001_000i64}),
        json!({"type": "observation", "id": uuid::Uuid::new_v4(), "kind": "discovery",
               "title": "An unattached one", "createdAtEpoch": 1_770_000_002_000i64}),
        json!({"type": "summary", "id": uuid::Uuid::new_v4(), "sessionId": session, "scope": "session",
               "request": "import memory", "createdAtEpoch": 1_770_000_003_000i64}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let run = crate::support::cairn(
        &app,
        &app.admin_token,
        &["import", "--project", "default"],
        body.as_bytes(),
    )
    .await;
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(app.count("SELECT count(*) FROM observation_embeddings").await, 0);

    let mut written = 0;
    loop {
        let n = cairn_generator::embed::backfill_batch(&app.pool, &embedder)
            .await
            .unwrap();
        if n == 0 {
            break;
        }
        written += n;
    }
    assert_eq!(written, 3);
    let embedded = app
        .count(&format!(
            "SELECT (SELECT count(*) FROM observation_embeddings WHERE project_id = '{0}')
                  + (SELECT count(*) FROM summary_embeddings WHERE project_id = '{0}')",
            app.project_id
        ))
        .await;
    assert_eq!(embedded, 3);
}
