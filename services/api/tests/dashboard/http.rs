//! The dashboard over plain HTTP: the page and its headers, the session
//! cookie's flags, CSRF refusals, revocation ending a session.

use cairn_testkit::spawn_app;
use serde_json::{Value, json};

use crate::support::sign_in;

#[tokio::test]
async fn the_page_and_its_assets_are_served_under_a_strict_csp() {
    let app = spawn_app().await;
    let res = app.client.get(format!("{}/", app.base)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert_eq!(res.headers()["cache-control"], "no-cache");
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = res.text().await.unwrap();
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "no inline script or style"
    );
    let start = html.find("/assets/").unwrap();
    let script = &html[start..start + html[start..].find('"').unwrap()];
    assert!(script.ends_with("/app.css") || script.ends_with("/favicon.svg") || script.ends_with("/app.js"));
    let version = script.split('/').nth(2).unwrap();
    assert_eq!(version.len(), 12, "{script}");

    let res = app
        .client
        .get(format!("{}/assets/{version}/pages/tokens.js", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert_eq!(
        res.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    // An older page's version still gets the file, uncached.
    let res = app
        .client
        .get(format!("{}/assets/000000000000/app.js", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-cache");
    let (status, body) = app.get(&format!("/assets/{version}/secrets.txt"), None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("asset_not_found"))
    );
    // Not part of the API's contract.
    let (_, spec) = app.get("/openapi.json", None).await;
    assert!(spec["paths"].get("/dashboard/session").is_none());
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_that_never_holds_the_token() {
    let app = spawn_app().await;
    let res = app
        .client
        .post(format!("{}/dashboard/session", app.base))
        .json(&json!({ "token": app.admin_token }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("cairn_session="), "{cookie}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800"] {
        assert!(cookie.contains(flag), "{flag} missing: {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    assert!(
        !cookie.contains(&app.admin_token),
        "the cookie names the token, never holds it"
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["csrf"].as_str().unwrap().len(), 64);
    assert!(body["scopes"].as_array().unwrap().contains(&json!("admin")));
    assert!(body.get("token").is_none() && !body.to_string().contains(&app.admin_token));

    // Behind a TLS proxy the cookie is Secure.
    let res = app
        .client
        .post(format!("{}/dashboard/session", app.base))
        .header("x-forwarded-proto", "https")
        .json(&json!({ "token": app.admin_token }))
        .send()
        .await
        .unwrap();
    assert!(res.headers()["set-cookie"].to_str().unwrap().contains("; Secure"));

    // A plain HTML form of the page works too, and lands on the page.
    let form = |origin: Option<(&'static str, String)>| {
        let mut req = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .post(format!("{}/dashboard/session", app.base))
            .form(&[("token", app.admin_token.as_str())]);
        if let Some((name, value)) = origin {
            req = req.header(name, value);
        }
        req.send()
    };
    let res = form(Some(("origin", app.base.clone()))).await.unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/");
    assert!(res.headers()["set-cookie"].to_str().unwrap().contains("HttpOnly"));
    let res = form(Some(("referer", format!("{}/", app.base)))).await.unwrap();
    assert_eq!(res.status(), 303, "the page's own Referer stands in for Origin");

    // Login CSRF: a form from nowhere, from a foreign page, or from the same
    // host over another scheme signs nobody in.
    let https_origin = app.base.replacen("http://", "https://", 1);
    for origin in [
        None,
        Some(("referer", "http://evil.example/login".to_string())),
        Some(("origin", https_origin)),
        Some(("origin", "null".to_string())),
    ] {
        let res = form(origin.clone()).await.unwrap();
        assert_eq!(res.status(), 403, "{origin:?}");
        assert!(res.headers().get("set-cookie").is_none());
        let err: Value = res.json().await.unwrap();
        assert_eq!(err["error"]["code"], "csrf_failed");
    }

    // A bad token, an empty body, a foreign origin: refused, no cookie.
    for (body, origin, status, code) in [
        (json!({"token": "not-a-token"}), None, 403, "invalid_token"),
        (json!({"token": ""}), None, 400, "invalid_sign_in"),
        (json!({"nope": 1}), None, 400, "invalid_sign_in"),
        (
            json!({"token": app.admin_token}),
            Some("http://evil.example"),
            403,
            "csrf_failed",
        ),
    ] {
        let mut req = app
            .client
            .post(format!("{}/dashboard/session", app.base))
            .json(&body);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), status, "{body}");
        assert!(res.headers().get("set-cookie").is_none());
        let err: Value = res.json().await.unwrap();
        assert_eq!(err["error"]["code"], code, "{err}");
    }
}

#[tokio::test]
async fn cookie_writes_need_the_session_csrf_header_and_bearer_writes_do_not() {
    let app = spawn_app().await;
    let (cookie, session) = sign_in(&app, &app.admin_token).await;
    let csrf = session["csrf"].as_str().unwrap();
    let url = format!("{}/v1/admin/tokens", app.base);
    // Dashboard sessions are token rows too (`kind = 'session'`): not what a write would add.
    let tokens = || app.count("SELECT count(*) FROM api_tokens WHERE kind <> 'session'");
    let before = tokens().await;

    // Reads with the cookie alone.
    let res = app
        .client
        .get(format!("{}/v1/whoami", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // A cross-site form POST: the browser sends the cookie, cannot add the header.
    let res = app
        .client
        .post(&url)
        .header("cookie", &cookie)
        .header("origin", "http://evil.example")
        .form(&[("name", "evil"), ("scopes", "admin")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["code"], "csrf_failed");

    let mint = json!({"name": "via-cookie", "scopes": ["read"]});
    for bad in ["", "00", "zz", &"0".repeat(64)] {
        let res = app
            .client
            .post(&url)
            .header("cookie", &cookie)
            .header("x-cairn-csrf", bad)
            .json(&mint)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "csrf `{bad}`");
    }
    // Another session's CSRF value does not fit this one.
    let (_, other) = sign_in(&app, &app.admin_token).await;
    let res = app
        .client
        .delete(format!("{}/v1/memories/{}", app.base, uuid::Uuid::new_v4()))
        .header("cookie", &cookie)
        .header("x-cairn-csrf", other["csrf"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(tokens().await, before, "nothing was written");

    let res = app
        .client
        .post(&url)
        .header("cookie", &cookie)
        .header("x-cairn-csrf", csrf)
        .json(&mint)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);

    // Bearer requests are unaffected, even with a cookie beside them.
    let res = app
        .client
        .post(&url)
        .bearer_auth(&app.admin_token)
        .header("cookie", "cairn_session=garbage")
        .json(&json!({"name": "via-bearer", "scopes": ["read"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    assert_eq!(tokens().await, before + 2);
}

#[tokio::test]
async fn a_forged_expired_or_misused_session_value_is_refused() {
    let app = spawn_app().await;
    let (cookie, _) = sign_in(&app, &app.admin_token).await;
    let value = cookie.trim_start_matches("cairn_session=").to_string();
    let get = |headers: Vec<(&'static str, String)>| {
        let mut req = app.client.get(format!("{}/v1/whoami", app.base));
        for (k, v) in headers {
            req = req.header(k, v);
        }
        req.send()
    };
    assert_eq!(
        get(vec![("cookie", "cairn_session=garbage".into())])
            .await
            .unwrap()
            .status(),
        401
    );
    let mut tampered = value.clone();
    tampered.pop();
    tampered.push(if value.ends_with('A') { 'B' } else { 'A' });
    assert_eq!(
        get(vec![("cookie", format!("cairn_session={tampered}"))])
            .await
            .unwrap()
            .status(),
        401
    );
    // The session value is not an API token.
    let res = get(vec![("authorization", format!("Bearer {value}"))])
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .client
        .get(format!("{}/dashboard/session", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["code"], "missing_credentials");
}

#[tokio::test]
async fn revoking_the_token_ends_its_session_and_sign_out_clears_the_cookie() {
    let app = spawn_app().await;
    let secret = app.mint(json!({"name": "laptop", "scopes": ["read"]})).await;
    let (cookie, _) = sign_in(&app, &secret).await;
    let whoami = |cookie: String| {
        app.client
            .get(format!("{}/v1/whoami", app.base))
            .header("cookie", cookie)
            .send()
    };
    assert_eq!(whoami(cookie.clone()).await.unwrap().status(), 200);
    let (_, me) = app.get("/v1/whoami", Some(&secret)).await;
    let id = me["tokenId"].as_str().unwrap();
    let (status, _) = app
        .post(
            &format!("/v1/admin/tokens/{id}/revoke"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let res = whoami(cookie.clone()).await.unwrap();
    assert_eq!(
        res.status(),
        401,
        "the session opened with a revoked token has ended"
    );
    let res = app
        .client
        .get(format!("{}/dashboard/session", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let res = app
        .client
        .delete(format!("{}/dashboard/session", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let cleared = res.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cleared.starts_with("cairn_session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
}

/// Signing out ends the session on the server: the old cookie, replayed,
/// answers nothing (before, it kept answering until it expired).
#[tokio::test]
async fn sign_out_ends_the_session_on_the_server() {
    let app = spawn_app().await;
    let (cookie, _) = sign_in(&app, &app.admin_token).await;
    let (other, _) = sign_in(&app, &app.admin_token).await;
    let whoami = |cookie: &str| {
        app.client
            .get(format!("{}/v1/whoami", app.base))
            .header("cookie", cookie.to_string())
            .send()
    };
    assert_eq!(whoami(&cookie).await.unwrap().status(), 200);
    let res = app
        .client
        .delete(format!("{}/dashboard/session", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let res = whoami(&cookie).await.unwrap();
    assert_eq!(res.status(), 401);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["code"], "session_ended", "{err}");
    assert_eq!(
        whoami(&other).await.unwrap().status(),
        200,
        "another sign-in of the same token goes on"
    );
    let (status, _) = app.get("/v1/whoami", Some(&app.admin_token)).await;
    assert_eq!(status, 200, "the token signed in with is not revoked");
    let revoked = app
        .count("SELECT count(*) FROM api_tokens WHERE kind = 'session' AND revoked_at IS NOT NULL")
        .await;
    assert_eq!(revoked, 1);
}
