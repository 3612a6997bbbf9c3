//! `cairn login` and `cairn logout` as a teammate runs them: the binary
//! against a real cairn-api with single sign-on to a real OpenID Connect
//! provider (`cairn_testkit::oidc`); the approval as the dashboard page
//! makes it (the member's session, its CSRF header). Then the laptop
//! token's attribution, `logout`, offboarding, and erasing a member's
//! data (checked in a `pg_dump` of the whole database).

use std::{
    io::{BufRead, BufReader},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use cairn_testkit::{Options, TestApp, oidc::OidcProvider, spawn_app_with};
use serde_json::{Value, json};

fn cairn(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

/// A `cairn login` under way: the page it asked to open and the code it shows.
struct Pending {
    child: Child,
    login_id: String,
    code: String,
}

fn start_login(home: &Path, base: &str, host: &str) -> Pending {
    let mut child = cairn(home, &["login", base, "--no-browser", "--host", host])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (mut page, mut code) = (None, None);
    let mut seen = String::new();
    while page.is_none() || code.is_none() {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "cairn login said:\n{seen}"
        );
        seen.push_str(&line);
        if let Some(at) = line.find("/#/cli/") {
            page = Some(line[at + "/#/cli/".len()..].trim().to_string());
        }
        if let Some(at) = line.find("the code ") {
            code = Some(
                line[at + "the code ".len()..]
                    .trim()
                    .trim_end_matches('.')
                    .to_string(),
            );
        }
    }
    // The rest of stderr is read when the process ends.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Pending {
        child,
        login_id: page.unwrap(),
        code: code.unwrap(),
    }
}

/// The member approves on the dashboard page: its session and CSRF header.
async fn approve(app: &TestApp, provider: &OidcProvider, pending: &Pending) {
    let (cookie, csrf) = provider.dashboard_session(&app.base).await;
    let shown: Value = app
        .client
        .get(format!("{}/auth/cli/{}", app.base, pending.login_id))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        shown["userCode"],
        pending.code.as_str(),
        "the page shows the terminal's code"
    );
    let res = app
        .client
        .post(format!("{}/auth/cli/{}/approve", app.base, pending.login_id))
        .header("cookie", &cookie)
        .header("x-cairn-csrf", csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

async fn finish(pending: Pending) -> std::process::Output {
    tokio::task::spawn_blocking(move || pending.child.wait_with_output().unwrap())
        .await
        .unwrap()
}

fn config(home: &Path) -> (PathBuf, String) {
    let path = home.join(".config/cairn/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

fn token_of(config: &str) -> String {
    let line = config
        .lines()
        .find(|l| l.starts_with("token"))
        .expect("a token line");
    line.split('"').nth(1).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_logs_a_laptop_in_and_out_with_the_company_account() {
    let provider = OidcProvider::start();
    let app = spawn_app_with(Options {
        extra: provider.settings(&[("CAIRN_OIDC_EMAIL_DOMAINS", "acme.test")]),
        ..Default::default()
    })
    .await;
    provider
        .sign_in_as(json!({"sub": "u-alice", "email": "alice@acme.test", "name": "Alice"}))
        .await;
    let home = tempfile::tempdir().unwrap();

    let pending = start_login(home.path(), &app.base, "alice-laptop");
    approve(&app, &provider, &pending).await;
    let out = finish(pending).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("✓ token") && stdout.contains("member alice@acme.test"),
        "the doctor ran:\n{stdout}"
    );

    let (path, text) = config(home.path());
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(text.contains(&format!("url = \"{}\"", app.base)), "{text}");
    let token = token_of(&text);
    let (status, me) = app.get("/v1/whoami", Some(&token)).await;
    assert_eq!(status, 200);
    assert_eq!(me["kind"], "laptop");
    assert_eq!(me["name"], "laptop: alice-laptop");
    assert_eq!(me["member"]["email"], "alice@acme.test");
    assert_eq!(me["scopes"], json!(["ingest", "read"]));

    // What the laptop sends carries its member: session, event, memory.
    let hook = cairn_testkit::cc("s-alice", "SessionStart", json!({"source": "startup"}));
    let (status, _) = app
        .post(
            &format!("/v1/hooks/claude-code?project={}", app.project_id),
            Some(&token),
            &hook,
        )
        .await;
    assert_eq!(status, 200);
    let member = me["member"]["id"].as_str().unwrap();
    let attributed = |table: &str| format!("SELECT count(*) FROM {table} WHERE member_id = '{member}'");
    assert_eq!(app.count(&attributed("sessions")).await, 1);
    assert_eq!(app.count(&attributed("agent_events")).await, 1);

    let members: Value = app.get("/v1/admin/members", Some(&app.admin_token)).await.1;
    let laptops = &members["members"][0]["laptops"];
    assert_eq!(laptops[0]["host"], "alice-laptop", "{members}");

    // Logout revokes the token on the server and removes it from the config.
    let out = cairn(home.path(), &["logout"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, err) = app.get("/v1/whoami", Some(&token)).await;
    assert_eq!((status, &err["error"]["code"]), (403, &json!("token_revoked")));
    let (_, text) = config(home.path());
    assert!(!text.contains("token"), "{text}");
    assert!(text.contains("url"), "the server stays configured: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offboarding_revokes_every_laptop_and_session_of_a_member_at_once() {
    let provider = OidcProvider::start();
    let app = spawn_app_with(Options {
        extra: provider.settings(&[("CAIRN_OIDC_EMAIL_DOMAINS", "acme.test")]),
        ..Default::default()
    })
    .await;
    provider
        .sign_in_as(json!({"sub": "u-bob", "email": "bob@acme.test", "name": "Bob"}))
        .await;
    let mut tokens = vec![];
    let mut homes = vec![];
    for host in ["bob-laptop", "bob-desktop"] {
        let home = tempfile::tempdir().unwrap();
        let pending = start_login(home.path(), &app.base, host);
        approve(&app, &provider, &pending).await;
        assert!(finish(pending).await.status.success());
        tokens.push(token_of(&config(home.path()).1));
        homes.push(home);
    }
    let (dashboard, _) = provider.dashboard_session(&app.base).await;
    let whoami_cookie = || {
        app.client
            .get(format!("{}/v1/whoami", app.base))
            .header("cookie", &dashboard)
            .send()
    };
    assert_eq!(whoami_cookie().await.unwrap().status(), 200);

    let (_, listed) = app.get("/v1/admin/members", Some(&app.admin_token)).await;
    let bob = &listed["members"][0];
    assert_eq!(bob["email"], "bob@acme.test");
    assert_eq!(bob["laptops"].as_array().unwrap().len(), 2, "{listed}");
    let id = bob["id"].as_str().unwrap();
    let (status, res) = app
        .post(
            &format!("/v1/admin/members/{id}/offboard"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    assert!(res["member"]["offboardedAtEpoch"].is_i64());
    assert!(
        res["member"]["laptops"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["revoked"] == true)
    );

    for token in &tokens {
        let (status, err) = app.get("/v1/whoami", Some(token)).await;
        assert_eq!((status, &err["error"]["code"]), (403, &json!("token_revoked")));
    }
    assert_eq!(
        whoami_cookie().await.unwrap().status(),
        401,
        "the dashboard session ended"
    );
    // And single sign-on refuses them from now on.
    let home = tempfile::tempdir().unwrap();
    let pending = start_login(home.path(), &app.base, "bob-again");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let res = http
        .get(format!("{}/auth/oidc/login", app.base))
        .send()
        .await
        .unwrap();
    let pending_cookie = res.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let to_provider = res.headers()["location"].to_str().unwrap().to_string();
    let back = http.get(&to_provider).send().await.unwrap().headers()["location"]
        .to_str()
        .unwrap()
        .to_string();
    let res = http
        .get(&back)
        .header("cookie", pending_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["code"], "member_offboarded");
    let mut child = pending.child;
    child.kill().unwrap();
    child.wait().unwrap();
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action = 'member.offboard'")
        .await;
    assert_eq!(audited, 1);
}

/// A laptop for `email`, signed in with `cairn login`; its token.
async fn laptop(app: &TestApp, provider: &OidcProvider, sub: &str, email: &str, name: &str) -> String {
    provider
        .sign_in_as(json!({"sub": sub, "email": email, "name": name}))
        .await;
    let home = tempfile::tempdir().unwrap();
    let pending = start_login(home.path(), &app.base, &format!("{sub}-host"));
    approve(app, provider, &pending).await;
    assert!(finish(pending).await.status.success());
    token_of(&config(home.path()).1)
}

/// One turn of Claude Code: start, a prompt, a file read, stop, end.
async fn a_session(app: &TestApp, token: &str, session: &str, words: &str, file: &str) {
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    let cc = cairn_testkit::cc;
    for body in [
        cc(session, "SessionStart", json!({"source": "startup"})),
        cc(
            session,
            "UserPromptSubmit",
            json!({"prompt": format!("Why does {words} fail in {file}?")}),
        ),
        cc(
            session,
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": format!("t-{session}"),
            "tool_input": {"file_path": file}, "tool_response": {"content": format!("// {words} lives here")}}),
        ),
        cc(
            session,
            "Stop",
            json!({"last_assistant_message": format!("{words} failed: the cache key in {file} was stale.")}),
        ),
        cc(session, "SessionEnd", json!({"reason": "exit"})),
    ] {
        let (status, res) = app.post(&path, Some(token), &body).await;
        assert_eq!(status, 200, "{res}");
    }
}

fn dump(database_url: &str) -> String {
    let out = Command::new("pg_dump")
        .args(["--data-only", "--no-owner", database_url])
        .output()
        .expect("pg_dump runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erasing_a_member_leaves_no_trace_of_them_and_others_intact() {
    let provider = OidcProvider::start();
    let app = spawn_app_with(Options {
        extra: provider.settings(&[("CAIRN_OIDC_EMAIL_DOMAINS", "acme.test")]),
        ..Default::default()
    })
    .await;
    let alice = laptop(&app, &provider, "u-alice", "alice@acme.test", "Alice Zebrafield").await;
    let bob = laptop(&app, &provider, "u-bob", "bob@acme.test", "Bob Okapison").await;
    a_session(&app, &alice, "s-alice", "ZEBRAQUUX", "src/zebra_alice.rs").await;
    a_session(&app, &bob, "s-bob", "OKAPIWOMBAT", "src/okapi_bob.rs").await;
    let generated = app.generate().await;
    assert!(generated.rows >= 2, "{generated:?}");
    let before = dump(&app.database_url);
    for trace in [
        "ZEBRAQUUX",
        "zebra_alice",
        "alice@acme.test",
        "Zebrafield",
        "u-alice",
        "OKAPIWOMBAT",
    ] {
        assert!(before.contains(trace), "the dump holds {trace} before");
    }
    let (_, found) = app
        .get(
            &format!(
                "/v1/search?projectId={}&query=ZEBRAQUUX&mode=fulltext",
                app.project_id
            ),
            Some(&bob),
        )
        .await;
    assert!(
        found.to_string().contains("ZEBRAQUUX"),
        "found before erasure: {found}"
    );
    let (_, me) = app.get("/v1/whoami", Some(&alice)).await;
    let alice_id = me["member"]["id"].as_str().unwrap().to_string();

    // Search by person: the words both wrote ("fail"), one member's memories.
    let by = |member: String| {
        let app = &app;
        let bob = &bob;
        async move {
            let (status, found) = app
                .get(
                    &format!(
                        "/v1/search?projectId={}&query=failed&memberId={member}",
                        app.project_id
                    ),
                    Some(bob),
                )
                .await;
            assert_eq!(status, 200, "{found}");
            found.to_string()
        }
    };
    let hers = by(alice_id.clone()).await;
    assert!(
        hers.contains("ZEBRAQUUX") && !hers.contains("OKAPIWOMBAT"),
        "{hers}"
    );
    let (_, bob_me) = app.get("/v1/whoami", Some(&bob)).await;
    let his = by(bob_me["member"]["id"].as_str().unwrap().to_string()).await;
    assert!(his.contains("OKAPIWOMBAT") && !his.contains("ZEBRAQUUX"), "{his}");

    // Alice erases her own data: she gets it all back first.
    let (status, erased) = app
        .post(
            &format!("/v1/admin/members/{alice_id}/erase"),
            Some(&alice),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(erased["sessions"], 1);
    assert!(erased["observations"].as_u64().unwrap() >= 1, "{erased}");
    let export = erased["export"].to_string();
    assert!(
        export.contains("ZEBRAQUUX") && !export.contains("OKAPIWOMBAT"),
        "her data, only hers"
    );

    let after = dump(&app.database_url);
    for trace in [
        "ZEBRAQUUX",
        "zebra_alice",
        "alice@acme.test",
        "Zebrafield",
        "u-alice",
        "u-alice-host",
    ] {
        assert!(
            !after.contains(trace),
            "{trace} is still in the database after erasure"
        );
    }
    for kept in ["OKAPIWOMBAT", "okapi_bob", "bob@acme.test"] {
        assert!(after.contains(kept), "{kept}: another member's data must stay");
    }
    let (status, _) = app.get("/v1/whoami", Some(&alice)).await;
    assert_eq!(status, 403, "her tokens are gone");
    let (status, found) = app
        .get(
            &format!(
                "/v1/search?projectId={}&query=OKAPIWOMBAT&mode=fulltext",
                app.project_id
            ),
            Some(&bob),
        )
        .await;
    assert_eq!(status, 200);
    assert!(
        found.to_string().contains("OKAPIWOMBAT"),
        "Bob's memory is still found: {found}"
    );
    for mode in ["fulltext", "hybrid"] {
        let (_, found) = app
            .get(
                &format!(
                    "/v1/search?projectId={}&query=ZEBRAQUUX&mode={mode}",
                    app.project_id
                ),
                Some(&bob),
            )
            .await;
        assert!(
            !found.to_string().contains("ZEBRAQUUX"),
            "{mode}: the index forgot her: {found}"
        );
    }
    assert_eq!(
        app.count("SELECT count(*) FROM audit_log WHERE action = 'member.erase'")
            .await,
        1
    );
}
