//! The shared test harness (crates/testkit): a real cairn-api per test.

pub use cairn_testkit::*;

use serde_json::Value;
use uuid::Uuid;

/// `GET /v1/search` with the ingest token (a project token with `read`); asserts 200.
pub async fn search(app: &TestApp, params: &str) -> Value {
    let (status, body) = app
        .get(&format!("/v1/search?{params}"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{params}: {body}");
    body
}

/// The ids of a search page's hits, in order.
pub fn hit_ids(body: &Value) -> Vec<Uuid> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            h[h["type"].as_str().unwrap()]["id"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

/// The ids a search finds.
pub async fn found(app: &TestApp, params: &str) -> Vec<Uuid> {
    hit_ids(&search(app, params).await)
}

/// A second server over `app`'s database whose shutdown the test controls:
/// its base URL, the sender that shuts it down, and the server's task.
pub async fn server_until_stopped(
    app: &TestApp,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let config = cairn_api::config::ApiConfig::from_env(&app.env).unwrap();
    let pool = cairn_shared::db::connect(&config.store).await.unwrap();
    let state = cairn_api::state::AppState::new(pool, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(cairn_api::server::serve_until(state, listener, async {
        let _ = stopped.await;
    }));
    (base, stop, server)
}
