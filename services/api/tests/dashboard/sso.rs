//! Single sign-on against a real OpenID Connect provider started by the
//! test (`cairn_testkit::oidc`): the dashboard sign-in in headless Chromium,
//! then over plain HTTP the mapping of domains and groups to roles, the
//! identities refused, and a forged callback.

use cairn_testkit::{Options, TestApp, oidc::OidcProvider, spawn_app_with};
use serde_json::{Value, json};

use crate::support::{browser, wait_text};

async fn app_with_sso(provider: &OidcProvider) -> TestApp {
    spawn_app_with(Options {
        extra: provider.settings(&[
            ("CAIRN_OIDC_EMAIL_DOMAINS", "acme.test"),
            ("CAIRN_OIDC_ADMIN_GROUPS", "platform"),
        ]),
        ..Default::default()
    })
    .await
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn set_cookie(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap().to_string())
        .find(|pair| pair.starts_with(&format!("{name}=")) && pair.len() > name.len() + 1)
}

/// The browser's round trip by hand: login → provider → callback. The
/// callback's answer.
async fn sign_in_over_http(app: &TestApp) -> reqwest::Response {
    let http = no_redirects();
    let res = http
        .get(format!("{}/auth/oidc/login?next=/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    let pending = set_cookie(&res, "cairn_oidc").expect("the pending sign-in cookie");
    let to_provider = res.headers()["location"].to_str().unwrap().to_string();
    assert!(to_provider.contains("code_challenge="), "PKCE: {to_provider}");
    let res = http.get(&to_provider).send().await.unwrap();
    assert_eq!(res.status(), 302, "the provider answers at once");
    let back = res.headers()["location"].to_str().unwrap().to_string();
    http.get(&back).header("cookie", pending).send().await.unwrap()
}

async fn whoami(app: &TestApp, cookie: &str) -> Value {
    let res = app
        .client
        .get(format!("{}/v1/whoami", app.base))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

#[tokio::test]
async fn a_teammate_signs_in_to_the_dashboard_with_the_company_provider() {
    let provider = OidcProvider::start();
    let app = app_with_sso(&provider).await;
    provider
        .sign_in_as(
            json!({"sub": "u-alice", "email": "alice@acme.test", "email_verified": true,
                           "name": "Alice Example", "groups": ["eng"]}),
        )
        .await;
    let (status, sso) = app.get("/auth/oidc", None).await;
    assert_eq!((status, &sso["enabled"]), (200, &json!(true)));

    let browser = browser(1280, 800).await;
    let c = &browser.client;
    c.goto(&format!("{}/", app.base)).await.unwrap();
    wait_text(c, "#sso:not([hidden]) a", "company account")
        .await
        .click()
        .await
        .unwrap();
    wait_text(c, "#who", "Alice Example").await;
    let landed = c.current_url().await.unwrap();
    assert!(
        landed.as_str().starts_with(&format!("{}/#/", app.base)),
        "back on the dashboard: {landed}"
    );
    let me: Value = c
        .execute_async(
            "const done = arguments[0]; fetch('/v1/whoami').then(r => r.json()).then(done);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(me["kind"], "session", "{me}");
    assert_eq!(me["member"]["email"], "alice@acme.test", "{me}");
    assert_eq!(me["member"]["name"], "Alice Example");
    assert_eq!(me["member"]["role"], "member");
    assert_eq!(me["scopes"], json!(["ingest", "read"]));
    assert_eq!(me["teamId"], app.team_id.to_string());
    let members = app
        .count(&format!(
            "SELECT count(*) FROM members WHERE issuer = '{}' AND subject = 'u-alice' AND role = 'member'",
            provider.issuer
        ))
        .await;
    assert_eq!(members, 1);
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action = 'member.sign_in'")
        .await;
    assert_eq!(audited, 1);
}

#[tokio::test]
async fn domains_and_groups_decide_who_enters_and_as_what() {
    let provider = OidcProvider::start();
    let app = app_with_sso(&provider).await;

    // An admin group: the member is an admin.
    provider
        .sign_in_as(json!({"sub": "u-bob", "email": "bob@acme.test", "name": "Bob", "groups": ["platform"]}))
        .await;
    let res = sign_in_over_http(&app).await;
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/");
    let cookie = set_cookie(&res, "cairn_session").expect("a session");
    let me = whoami(&app, &cookie).await;
    assert_eq!(me["member"]["role"], "admin", "{me}");
    assert!(me["scopes"].as_array().unwrap().contains(&json!("admin")));

    // Signing in again is the same member; leaving the group makes them a member.
    provider
        .sign_in_as(json!({"sub": "u-bob", "email": "bob@acme.test", "groups": []}))
        .await;
    let res = sign_in_over_http(&app).await;
    let again = whoami(&app, &set_cookie(&res, "cairn_session").unwrap()).await;
    assert_eq!(again["member"]["id"], me["member"]["id"]);
    assert_eq!(again["member"]["role"], "member");
    assert_eq!(app.count("SELECT count(*) FROM members").await, 1);

    // A wrong domain, or an email the provider has not verified: refused, no session.
    for (who, identity) in [
        (
            "another domain",
            json!({"sub": "u-eve", "email": "eve@evil.test", "groups": ["platform"]}),
        ),
        (
            "an unverified email",
            json!({"sub": "u-mal", "email": "mal@acme.test", "email_verified": false}),
        ),
    ] {
        provider.sign_in_as(identity).await;
        let res = sign_in_over_http(&app).await;
        assert_eq!(res.status(), 403, "{who}");
        assert!(set_cookie(&res, "cairn_session").is_none(), "{who}");
        let err: Value = res.json().await.unwrap();
        assert_eq!(err["error"]["code"], "identity_not_allowed", "{who}");
    }
    assert_eq!(app.count("SELECT count(*) FROM members").await, 1);
}

#[tokio::test]
async fn a_callback_not_started_here_is_refused() {
    let provider = OidcProvider::start();
    let app = app_with_sso(&provider).await;
    let http = no_redirects();
    // No pending cookie (a link from elsewhere: login CSRF).
    let res = http
        .get(format!("{}/auth/oidc/callback?code=x&state=y", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["code"], "sso_state_mismatch");
    // A pending cookie of one sign-in with the state of another.
    let first = http
        .get(format!("{}/auth/oidc/login", app.base))
        .send()
        .await
        .unwrap();
    let pending = set_cookie(&first, "cairn_oidc").unwrap();
    let res = http
        .get(format!("{}/auth/oidc/callback?code=x&state=forged", app.base))
        .header("cookie", pending)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert!(set_cookie(&res, "cairn_session").is_none());

    // Without single sign-on configured, its routes say so.
    let plain = cairn_testkit::spawn_app().await;
    let (status, body) = plain.get("/auth/oidc/login", None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("sso_not_configured"))
    );
    let (_, sso) = plain.get("/auth/oidc", None).await;
    assert_eq!(sso["enabled"], false);
}
