//! The people pages in a real headless Chromium: a reviewer shares a
//! member's private memory from the review queue, and offboards a member
//! (their laptop token refused at once) from the members page; sessions and
//! observations are filtered by person.

use cairn_testkit::spawn_app;
use fantoccini::Locator;
use serde_json::json;

use crate::support::{browser, sign_in_browser, wait_for, wait_text};

#[tokio::test]
async fn a_reviewer_shares_a_private_memory_and_offboards_a_member() {
    let app = spawn_app().await;
    app.private_first().await;
    let (alice_id, alice) = app.member_token("alice@acme.test").await;
    let memory = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, member_id, visibility)
         VALUES ($1, $2, $3, 'test:' || $1, 'decision', 'Pin the registry mirror in CI', $4, 'private')",
    )
    .bind(memory)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(alice_id)
    .execute(&app.pool)
    .await
    .unwrap();
    let visibility = || async {
        sqlx::query_scalar::<_, String>("SELECT visibility FROM observations WHERE id = $1")
            .bind(memory)
            .fetch_one(&app.pool)
            .await
            .unwrap()
    };

    let browser = browser(1280, 900).await;
    let c = &browser.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    c.goto(&format!("{}/#/review", app.base)).await.unwrap();
    wait_text(c, "#review .review-title", "Pin the registry mirror").await;
    c.find(Locator::Css(&format!("[data-promote='{memory}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(c, "#review", "Nothing waits for review").await;
    assert_eq!(visibility().await, "team");
    let promoted = app
        .count("SELECT count(*) FROM audit_log WHERE action = 'memory.promote'")
        .await;
    assert_eq!(promoted, 1);

    c.goto(&format!("{}/#/members", app.base)).await.unwrap();
    let row = wait_text(c, "#members tr", "alice@acme.test").await;
    assert!(
        row.text().await.unwrap().contains("alice@acme.test"),
        "her laptop is listed"
    );
    let offboard = row.find(Locator::Css("button.danger")).await.unwrap();
    offboard.click().await.unwrap();
    offboard.click().await.unwrap();
    wait_text(c, "#members tr", "offboarded").await;
    let (status, err) = app.get("/v1/whoami", Some(&alice)).await;
    assert_eq!((status, &err["error"]["code"]), (403, &json!("token_revoked")));
    wait_for(c, "#members").await;
}

/// A session of `token`'s in `cwd`, and one observation of `member`'s.
async fn works(app: &cairn_testkit::TestApp, token: &str, member: uuid::Uuid, cwd: &str, title: &str) {
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    let mut start = cairn_testkit::cc(&format!("s-{cwd}"), "SessionStart", json!({"source": "startup"}));
    start["cwd"] = json!(cwd);
    let (status, res) = app.post(&path, Some(token), &start).await;
    assert_eq!(status, 200, "{res}");
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, member_id)
         VALUES ($1, $2, $3, 'test:' || $1, 'discovery', $4, $5)",
    )
    .bind(uuid::Uuid::now_v7())
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(title)
    .bind(member)
    .execute(&app.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn sessions_and_observations_are_filtered_by_person() {
    let app = spawn_app().await;
    let (alice_id, alice) = app.member_token("alice@acme.test").await;
    let (bob_id, bob) = app.member_token("bob@acme.test").await;
    works(
        &app,
        &alice,
        alice_id,
        "/home/alice/shop",
        "Cache keys carry the locale",
    )
    .await;
    works(&app, &bob, bob_id, "/home/bob/shop", "Retries back off on 503").await;

    let browser = browser(1280, 900).await;
    let c = &browser.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    c.goto(&format!("{}/#/sessions", app.base)).await.unwrap();
    let all = wait_text(c, "#sessions", "/home/bob/shop").await;
    assert!(all.text().await.unwrap().contains("/home/alice/shop"));
    wait_for(c, "#person")
        .await
        .select_by_value(&alice_id.to_string())
        .await
        .unwrap();
    let hers = wait_for(c, &format!("#sessions[data-member='{alice_id}']")).await;
    let text = hers.text().await.unwrap();
    assert!(text.contains("/home/alice/shop"), "{text}");
    assert!(
        !text.contains("/home/bob/shop"),
        "bob's session under alice: {text}"
    );

    c.goto(&format!("{}/#/observations", app.base)).await.unwrap();
    wait_text(c, "#results", "Cache keys carry the locale").await;
    wait_for(c, "#search details summary")
        .await
        .click()
        .await
        .unwrap();
    wait_for(c, "#person")
        .await
        .select_by_value(&bob_id.to_string())
        .await
        .unwrap();
    c.find(Locator::Css("#search button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(c, "#search-timing[data-kind='search']").await;
    let text = wait_for(c, "#results").await.text().await.unwrap();
    assert!(text.contains("Retries back off on 503"), "{text}");
    assert!(!text.contains("Cache keys"), "alice's memory under bob: {text}");
}
