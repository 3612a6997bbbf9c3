//! A read-only token in Chromium: no admin pages in the navigation, the
//! page refused when asked for, its writes refused by the API.

use cairn_testkit::spawn_app;
use fantoccini::Locator;
use serde_json::json;

use crate::support::{browser, js, screenshot, sign_in_browser, wait_for, wait_text};

#[tokio::test]
async fn a_read_only_token_sees_no_admin_pages_and_its_writes_are_refused() {
    let app = spawn_app().await;
    let secret = app
        .mint(json!({"name": "reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &secret).await;
    let nav = wait_for(c, "#nav").await.text().await.unwrap();
    assert!(nav.contains("Observations") && nav.contains("Jobs"), "{nav}");
    for admin in ["Tokens", "Projects", "Audit log", "Teams"] {
        assert!(!nav.contains(admin), "{admin} shown to a reader: {nav}");
    }
    c.goto(&format!("{}/#/tokens", app.base)).await.unwrap();
    wait_text(c, "h1#refused", "Not allowed").await;
    screenshot(c, "refused").await;
    assert!(c.find(Locator::Css("#mint-token")).await.is_err());

    // The API refuses what the page does not offer: with the CSRF header the
    // scope check answers, without it the CSRF check does.
    let script = "return fetch('/dashboard/session').then(r => r.json()).then(s => Promise.all([
        fetch('/v1/admin/tokens', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Cairn-Csrf': s.csrf},
              body: JSON.stringify({name: 'x', scopes: ['admin']})}).then(r => r.json()),
        fetch('/v1/admin/tokens', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({name: 'x', scopes: ['read']})}).then(r => r.json()),
        fetch('/v1/jobs/00000000-0000-0000-0000-000000000000/retry', {method: 'POST', headers: {'X-Cairn-Csrf': s.csrf}}).then(r => r.json()),
      ])).then(all => all.map(b => b.error.code))";
    assert_eq!(
        js(c, script).await,
        json!(["insufficient_scope", "csrf_failed", "insufficient_scope"])
    );
    let tokens = app
        .count("SELECT count(*) FROM api_tokens WHERE name = 'x'")
        .await;
    assert_eq!(tokens, 0);
}
