//! The Observations page and a session's jobs in Chromium: the project's
//! newest observations show on arrival, before any search; a job's usage
//! reads as a few words, not as raw JSON; an observation's feedback is
//! shown and given on its page.

use cairn_testkit::{seed_jobs, spawn_app};
use fantoccini::Locator;
use serde_json::json;

use crate::support::{browser, fill, js, screenshot, sign_in_browser, wait_for, wait_text};

#[tokio::test]
async fn the_newest_observations_show_without_pressing_search() {
    let app = spawn_app().await;
    // Written oldest first, then dated an hour, a minute and no time ago.
    for (content, age) in [
        ("Oldest: the cache keys by commit", "1 hour"),
        ("Middle: retries back off with jitter", "1 minute"),
        ("Newest: the parser keeps spans", "0 seconds"),
    ] {
        let (status, body) = app
            .post(
                "/v1/memories",
                Some(&app.admin_token),
                &json!({"projectId": app.project_id, "kind": "decision", "content": content}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        let id: uuid::Uuid = body["memory"]["id"].as_str().unwrap().parse().unwrap();
        sqlx::query("UPDATE observations SET created_at = now() - $2::interval WHERE id = $1")
            .bind(id)
            .bind(age)
            .execute(&app.pool)
            .await
            .unwrap();
    }
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    c.goto(&format!("{}/#/observations", app.base)).await.unwrap();
    // No search typed or pressed: the list is there on arrival, newest first.
    wait_text(c, "#results h2", "Newest observations").await;
    assert_eq!(
        wait_for(c, "#query").await.prop("value").await.unwrap(),
        Some(String::new()),
        "nothing was searched"
    );
    let mut titles = Vec::new();
    for hit in c.find_all(Locator::Css("#results a.hit-title")).await.unwrap() {
        titles.push(hit.text().await.unwrap());
    }
    assert_eq!(
        titles,
        [
            "Newest: the parser keeps spans",
            "Middle: retries back off with jitter",
            "Oldest: the cache keys by commit"
        ],
        "the newest first"
    );
    wait_text(c, "#search-timing", "3 newest observations").await;
    screenshot(c, "observations-newest").await;
}

#[tokio::test]
async fn a_jobs_usage_reads_as_tokens_not_as_json() {
    let app = spawn_app().await;
    let session = seed_jobs(&app.pool, app.team_id, app.project_id, 1).await;
    // As the generator stores it (cairn_core's `Usage`).
    sqlx::query(
        "UPDATE generation_jobs SET status = 'completed', completed_at = now(),
             usage = '{\"provider\": \"anthropic\", \"model\": \"claude-haiku-4-5-20251001\",
                       \"input_tokens\": 1234, \"output_tokens\": 56, \"cached_tokens\": 1000,
                       \"cache_creation_tokens\": 0, \"latency_ms\": 1500}'
         WHERE session_id = $1",
    )
    .bind(session)
    .execute(&app.pool)
    .await
    .unwrap();
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    c.goto(&format!("{}/#/sessions/{session}", app.base))
        .await
        .unwrap();
    let cell = wait_for(c, ".turn td[data-label=Usage]").await;
    let text = cell.text().await.unwrap();
    assert_eq!(text, "in 1,234 · out 56 tokens · 1,000 cached · 1.5 s");
    assert!(!text.contains('{') && !text.contains("input_tokens"), "{text}");
    // The model is one hover away.
    let title = cell
        .find(Locator::Css(".usage"))
        .await
        .unwrap()
        .attr("title")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(title.contains("claude-haiku-4-5"), "{title}");
    // The jobs table fits its place: no sideways scroll.
    let overflow = js(
        c,
        "const w = document.querySelector('.turn .table-wrap'); return w.scrollWidth - w.clientWidth",
    )
    .await;
    assert!(
        overflow.as_i64().unwrap() <= 0,
        "the jobs table scrolls by {overflow} px"
    );
    screenshot(c, "session-usage").await;
}

#[tokio::test]
async fn an_observations_feedback_is_shown_and_given_on_its_page() {
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &json!({"projectId": app.project_id, "kind": "decision", "content": "Retries back off with jitter"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let id = body["memory"]["id"].as_str().unwrap().to_string();
    // An agent marked it helpful before anyone opened the page.
    let (status, body) = app
        .post(
            &format!("/v1/memories/{id}/feedback"),
            Some(&app.ingest_token),
            &json!({"verdict": "helpful", "note": "saved me a search"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    c.goto(&format!("{}/#/observations/{id}", app.base))
        .await
        .unwrap();
    wait_text(c, "#feedback-counts", "1 helpful · 0 misleading").await;
    wait_text(c, "#feedback-marks li", "saved me a search").await;
    // A person marks it misleading, with a reason.
    js(
        c,
        "document.querySelector('#feedback-verdict').value = 'misleading'",
    )
    .await;
    fill(c, "#feedback-note", "the jitter was removed in March").await;
    wait_for(c, "#feedback-form button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    wait_text(c, "#feedback-counts", "1 helpful · 1 misleading").await;
    let newest = wait_text(c, "#feedback-marks li", "the jitter was removed in March").await;
    assert!(newest.text().await.unwrap().starts_with("misleading"));
    let stored: i32 = sqlx::query_scalar("SELECT misleading_count FROM observations WHERE id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, 1, "the mark reached the database");
    screenshot(c, "observation-feedback").await;
}
