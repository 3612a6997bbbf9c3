//! Teams and projects in Chromium: a superadmin creates a team and sets its
//! LLM budget; an admin creates a project, changes its settings and adds a
//! working-directory rule.

use cairn_testkit::spawn_app;
use fantoccini::{Client, Locator};
use serde_json::json;

use crate::support::{browser, fill, screenshot, sign_in_browser, wait_text};

async fn submit(c: &Client, form: &str) {
    c.find(Locator::Css(&format!("{form} button[type=submit]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test]
async fn teams_and_project_settings_and_rules_are_changed_from_the_page() {
    let app = spawn_app().await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;

    c.goto(&format!("{}/#/teams", app.base)).await.unwrap();
    fill(c, "#new-team input[name=slug]", "platform").await;
    fill(c, "#new-team input[name=name]", "Platform team").await;
    submit(c, "#new-team").await;
    wait_text(c, "td", "Platform team").await;
    fill(c, "form[data-team=platform] input[name=budget]", "50000").await;
    submit(c, "form[data-team=platform]").await;
    wait_text(c, "form[data-team=platform] .notice", "50000 tokens a day").await;
    let budget: Option<i64> =
        sqlx::query_scalar("SELECT llm_daily_token_budget FROM teams WHERE slug = 'platform'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(budget, Some(50_000));

    c.goto(&format!("{}/#/projects", app.base)).await.unwrap();
    fill(c, "#new-project input[name=slug]", "billing").await;
    submit(c, "#new-project").await;
    wait_text(c, "td a", "billing").await.click().await.unwrap();
    wait_text(c, "main h1", "Project billing").await;
    fill(c, "#project-settings input[name=contextBudgetTokens]", "3000").await;
    fill(c, "#project-settings input[name=llmDailyTokenBudget]", "12000").await;
    submit(c, "#project-settings").await;
    wait_text(c, "#project-settings .notice", "Saved").await;
    fill(
        c,
        "#new-rule input[name=pattern]",
        "git@github.com:acme/billing.git",
    )
    .await;
    submit(c, "#new-rule").await;
    wait_text(c, "td code", "github.com/acme/billing").await;
    screenshot(c, "project-settings").await;

    let (_, projects) = app.get("/v1/admin/projects", Some(&app.admin_token)).await;
    let billing = projects["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["slug"] == "billing")
        .unwrap()
        .clone();
    assert_eq!(billing["contextBudgetTokens"], 3000);
    let id = billing["id"].as_str().unwrap();
    let (_, usage) = app
        .get(&format!("/v1/projects/{id}/usage"), Some(&app.admin_token))
        .await;
    assert_eq!(usage["dailyTokenBudget"], 12000, "{usage}");
    let (_, rules) = app
        .get(&format!("/v1/admin/projects/{id}/rules"), Some(&app.admin_token))
        .await;
    assert_eq!(
        rules["rules"][0]["pattern"],
        json!("github.com/acme/billing"),
        "{rules}"
    );
}
