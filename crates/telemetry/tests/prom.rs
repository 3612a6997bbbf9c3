//! The `/metrics` listener, in a test binary of its own: the recorder is
//! global to the process, so no other test may install it first.

#![cfg(feature = "serve")]

/// What is counted right after `serve` returns is rendered. On a
/// current-thread runtime the listener's task has not run yet at that point,
/// so this fails if the recorder is installed by the task rather than by
/// `serve` itself (a process's first job claims were lost that way).
#[tokio::test(flavor = "current_thread")]
async fn a_count_made_as_serve_returns_is_rendered() {
    let addr = cairn_telemetry::prom::serve("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    metrics::counter!("cairn_prom_test_total", "step" => "first").increment(3);
    let text = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.lines()
            .any(|l| l == "cairn_prom_test_total{step=\"first\"} 3"),
        "{text}"
    );
}
