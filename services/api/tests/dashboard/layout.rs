//! Layout and keyboard: no horizontal scroll at 375 px, and the sign-in and
//! the main navigation reached with Tab and Enter alone.

use cairn_testkit::spawn_app;
use fantoccini::{
    Client,
    actions::{InputSource, KeyAction, KeyActions},
};
use serde_json::json;

use crate::support::{browser, browser_with, js, screenshot, settled, sign_in_browser, wait_for, wait_text};

async fn press(c: &Client, key: char) {
    c.perform_actions(
        KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: key })
            .then(KeyAction::Up { value: key }),
    )
    .await
    .unwrap();
}

async fn shift_tab(c: &Client) {
    c.perform_actions(
        KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: SHIFT })
            .then(KeyAction::Down { value: TAB })
            .then(KeyAction::Up { value: TAB })
            .then(KeyAction::Up { value: SHIFT }),
    )
    .await
    .unwrap();
}

const SHIFT: char = '\u{e008}';
const TAB: char = '\u{e004}';
const ENTER: char = '\u{e007}';

async fn active(c: &Client) -> String {
    js(c, "const a = document.activeElement; return (a.id || '') + '|' + (a.dataset.page || '') + '|' + a.tagName")
        .await
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn no_page_scrolls_sideways_at_375_px() {
    let app = spawn_app().await;
    app.post(
        "/v1/memories",
        Some(&app.admin_token),
        &json!({"projectId": app.project_id, "content": format!("a long unbroken line {}", "x".repeat(400))}),
    )
    .await;
    let b = browser(375, 800).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    let width = js(c, "return window.innerWidth").await.as_i64().unwrap();
    assert!(width <= 400, "viewport {width}");
    for page in [
        "observations",
        "sessions",
        "jobs",
        "live",
        "projects",
        "tokens",
        "audit",
        "teams",
    ] {
        c.goto(&format!("{}/#/{page}", app.base)).await.unwrap();
        // Measured once the page has drawn its data.
        settled(c).await;
        wait_for(c, "main h1").await;
        let overflow = js(
            c,
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
        )
        .await;
        assert!(
            overflow.as_i64().unwrap() <= 0,
            "{page} scrolls sideways by {overflow} px"
        );
        screenshot(c, &format!("375-{page}")).await;
    }
}

#[tokio::test]
async fn the_keyboard_alone_signs_in_and_reaches_the_navigation() {
    let app = spawn_app().await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    c.goto(&format!("{}/", app.base)).await.unwrap();
    wait_for(c, "#token").await;
    // The sign-in field has focus on arrival: type the token, press Enter.
    assert!(active(c).await.starts_with("token|"), "{}", active(c).await);
    c.perform_actions(
        app.admin_token
            .chars()
            .fold(KeyActions::new("typing".into()), |k, ch| {
                k.then(KeyAction::Down { value: ch })
                    .then(KeyAction::Up { value: ch })
            }),
    )
    .await
    .unwrap();
    press(c, ENTER).await;
    wait_for(c, "#who-name").await;
    // A fresh load: the skip link comes first, visibly focused, and moves
    // focus to the content.
    c.refresh().await.unwrap();
    wait_for(c, "#who-name").await;
    press(c, TAB).await;
    assert!(active(c).await.starts_with("skip|"), "{}", active(c).await);
    let outline = js(c, "return getComputedStyle(document.activeElement).outlineStyle").await;
    assert_ne!(outline, json!("none"), "focus is visible");
    press(c, ENTER).await;
    assert!(active(c).await.starts_with("main|"), "{}", active(c).await);
    // Back from the content with Shift+Tab into the navigation, to Tokens.
    let mut reached = None;
    for _ in 0..12 {
        shift_tab(c).await;
        let a = active(c).await;
        if a.contains("|tokens|") {
            reached = Some(a);
            break;
        }
    }
    assert!(reached.is_some(), "Shift+Tab never reached the Tokens link");
    press(c, ENTER).await;
    wait_text(c, "main h1", "Tokens").await;
    assert!(c.current_url().await.unwrap().as_str().ends_with("#/tokens"));
    screenshot(c, "keyboard-tokens").await;
}

#[tokio::test]
async fn dark_mode_follows_the_system_preference() {
    let app = spawn_app().await;
    let b = browser_with(1280, 900, &["--blink-settings=preferredColorScheme=0"]).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    let dark = js(c, "return matchMedia('(prefers-color-scheme: dark)').matches").await;
    assert_eq!(dark, json!(true), "the browser prefers dark");
    let bg = js(c, "return getComputedStyle(document.body).backgroundColor").await;
    assert_eq!(bg, json!("rgb(20, 21, 26)"), "the dark background");
    screenshot(c, "dark").await;
}
