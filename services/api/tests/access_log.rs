//! The access log names request id, route, status, latency and token id,
//! never the token. A test binary of its own: it captures the log with a
//! thread-scoped subscriber, and in a binary whose other tests run in
//! parallel threads tracing's cached call-site interest can leave the
//! capture empty.

use std::{
    io::Write,
    sync::{Arc, Mutex},
};

use cairn_testkit::spawn_app;

/// A `MakeWriter` into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn access_log_names_request_route_status_latency_and_token_id_not_the_token() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber_fmt(move || writer.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let app = spawn_app().await;
    let id = uuid::Uuid::now_v7();
    let res = app
        .client
        .get(format!("{}/v1/jobs/{id}", app.base))
        .bearer_auth(&app.admin_token)
        .header("x-request-id", "access-log-test-1")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let (status, me) = app.get("/v1/whoami", Some(&app.admin_token)).await;
    assert_eq!(status, 200, "{me}");
    let token_id = me["tokenId"]
        .as_str()
        .unwrap_or_else(|| panic!("{me}"))
        .to_owned();
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("access-log-test-1") && l.contains("access"))
        .unwrap_or_else(|| panic!("no access line in {log}"));
    assert!(line.contains("route=/v1/jobs/{id}"), "{line}");
    assert!(line.contains("status=404"), "{line}");
    assert!(line.contains("latency_ms="), "{line}");
    assert!(line.contains(&format!("token_id={token_id}")), "{line}");
    assert!(!log.contains(&app.admin_token), "the token never reaches the log");
}

fn tracing_subscriber_fmt<W>(writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter("info")
        .finish()
}
