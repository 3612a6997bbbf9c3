//! The admin API end to end: teams, projects and tokens (minted once, listed without secrets,
//! revoked for good, expiring), who may do what, and the audit log every change writes to.

use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, spawn_app};

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn id_of(v: &Value) -> Uuid {
    v["id"].as_str().unwrap().parse().unwrap()
}

fn assert_error(what: &str, (status, body): (u16, Value), expected: (u16, &str)) {
    assert_eq!(
        (status, body["error"]["code"].as_str().unwrap_or("<none>")),
        expected,
        "{what}: {body}"
    );
}

/// True when any string anywhere in `v` (key or value) equals `needle`.
fn holds_string(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s == needle,
        Value::Array(items) => items.iter().any(|i| holds_string(i, needle)),
        Value::Object(map) => map.iter().any(|(k, v)| k == needle || holds_string(v, needle)),
        _ => false,
    }
}

/// A valid `/v1/events` body for the default project.
fn an_event() -> Value {
    json!({"projectId": "default", "sourceType": "api", "eventType": "note", "occurredAtEpoch": now_ms()})
}

async fn token_id(app: &TestApp, name: &str) -> Uuid {
    sqlx::query_scalar("SELECT id FROM api_tokens WHERE name = $1")
        .bind(name)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// Mints with the admin token and returns (token object, secret).
async fn mint_full(app: &TestApp, token: &str, body: Value) -> (Value, String) {
    let (status, res) = app.post("/v1/admin/tokens", Some(token), &body).await;
    assert_eq!(status, 201, "{res}");
    (res["token"].clone(), res["secret"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn teams_and_projects_are_created_once_per_slug_and_slugs_are_validated() {
    let app = spawn_app().await;
    let admin = Some(app.admin_token.as_str());

    let (status, res) = app
        .post(
            "/v1/admin/teams",
            admin,
            &json!({"slug": "acme", "name": "  Acme Inc "}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    assert_eq!(res["team"]["slug"], "acme");
    assert_eq!(res["team"]["name"], "Acme Inc");
    let acme = id_of(&res["team"]);

    let dup = app
        .post(
            "/v1/admin/teams",
            admin,
            &json!({"slug": "acme", "name": "Other"}),
        )
        .await;
    assert_error("duplicate team slug", dup, (409, "slug_taken"));
    let too_long = "a".repeat(64);
    for slug in ["Acme", "has space", "dotted.team", "-dash", "", too_long.as_str()] {
        let res = app
            .post("/v1/admin/teams", admin, &json!({"slug": slug, "name": "x"}))
            .await;
        assert_error(&format!("team slug {slug:?}"), res, (422, "invalid_slug"));
    }
    let res = app
        .post("/v1/admin/teams", admin, &json!({"slug": "noname", "name": " "}))
        .await;
    assert_error("blank team name", res, (422, "invalid_field"));

    // Projects: unique per team, so the same slug may exist in two teams.
    let (status, res) = app
        .post("/v1/admin/projects", admin, &json!({"slug": "web"}))
        .await;
    assert_eq!(status, 201, "{res}");
    assert_eq!(res["project"]["teamId"], app.team_id.to_string());
    assert_eq!(res["project"]["name"], "web", "the name defaults to the slug");
    let dup = app
        .post(
            "/v1/admin/projects",
            admin,
            &json!({"slug": "web", "name": "Web again"}),
        )
        .await;
    assert_error("duplicate project slug", dup, (409, "slug_taken"));
    let (status, res) = app
        .post(
            "/v1/admin/projects",
            admin,
            &json!({"teamId": acme, "slug": "web", "name": "Acme web"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    assert_eq!(res["project"]["teamId"], acme.to_string());
    let res = app
        .post("/v1/admin/projects", admin, &json!({"slug": "Web App"}))
        .await;
    assert_error("invalid project slug", res, (422, "invalid_slug"));
    let res = app
        .post(
            "/v1/admin/projects",
            admin,
            &json!({"teamId": Uuid::new_v4(), "slug": "ghost"}),
        )
        .await;
    // A superadmin naming a team that does not exist: refused by the database's foreign key.
    assert_error("project in an unknown team", res, (422, "constraint_violation"));

    // A plain team admin creates no teams.
    let plain = app
        .mint(json!({"name": "plain admin", "scopes": ["admin"]}))
        .await;
    let res = app
        .post(
            "/v1/admin/teams",
            Some(&plain),
            &json!({"slug": "mine", "name": "Mine"}),
        )
        .await;
    assert_error("team by a plain admin", res, (403, "insufficient_scope"));

    let teams: Vec<String> = sqlx::query_scalar("SELECT slug FROM teams ORDER BY created_at")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert_eq!(teams, vec!["default", "acme"]);
    let projects: Vec<(String, String)> = sqlx::query_as(
        "SELECT t.slug, p.slug FROM projects p JOIN teams t ON t.id = p.team_id ORDER BY p.created_at",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let projects: Vec<(&str, &str)> = projects.iter().map(|(t, p)| (t.as_str(), p.as_str())).collect();
    assert_eq!(
        projects,
        vec![("default", "default"), ("default", "web"), ("acme", "web")]
    );
}

#[tokio::test]
async fn a_read_token_reads_cannot_ingest_is_listed_without_its_secret_and_stays_revoked_after_restart() {
    let app = spawn_app().await;
    let admin = Some(app.admin_token.as_str());
    let (token, secret) = mint_full(
        &app,
        &app.admin_token,
        json!({"name": "reader", "scopes": ["read"]}),
    )
    .await;
    let id = id_of(&token);
    assert_eq!(token["scopes"], json!(["read"]));
    assert_eq!(token["teamId"], app.team_id.to_string());
    assert_eq!(token["projectId"], Value::Null);
    assert_eq!(token["revokedAtEpoch"], Value::Null);

    let (status, res) = app.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 200, "{res}");
    let res = app.post("/v1/events", Some(&secret), &an_event()).await;
    assert_error("ingest with a read token", res, (403, "insufficient_scope"));
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 0);

    // Listed, but nowhere with its secret; the database keeps only a salted hash.
    let (status, list) = app.get("/v1/admin/tokens", admin).await;
    assert_eq!(status, 200);
    let listed = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id.to_string())
        .expect("the minted token is listed");
    assert_eq!(listed["name"], "reader");
    assert_eq!(listed["scopes"], json!(["read"]));
    assert!(
        !holds_string(&list, &secret),
        "the secret is never listed: {list}"
    );
    for t in list["tokens"].as_array().unwrap() {
        let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|k| !k.to_lowercase().contains("secret") && !k.to_lowercase().contains("hash")),
            "{keys:?}"
        );
    }
    let stored: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM api_tokens t WHERE strpos(t::text, $1) > 0 OR strpos(encode(secret_hash, 'escape'), $1) > 0",
    )
    .bind(&secret)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(stored, 0, "the secret is not stored in clear");

    let (status, res) = app
        .post(&format!("/v1/admin/tokens/{id}/revoke"), admin, &json!({}))
        .await;
    assert_eq!(status, 200, "{res}");
    let revoked_at = res["token"]["revokedAtEpoch"]
        .as_i64()
        .expect("revokedAtEpoch is set");
    let res = app.get("/v1/jobs", Some(&secret)).await;
    assert_error("revoked token, same server", res, (403, "token_revoked"));

    // Revoking again changes nothing; an unknown id is 404.
    let (status, again) = app
        .post(&format!("/v1/admin/tokens/{id}/revoke"), admin, &json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(again["token"]["revokedAtEpoch"], revoked_at);
    let res = app
        .post(
            &format!("/v1/admin/tokens/{}/revoke", Uuid::new_v4()),
            admin,
            &json!({}),
        )
        .await;
    assert_error("revoke an unknown token", res, (404, "token_not_found"));

    // A restarted server (same database, empty cache) refuses it too.
    let restarted = app.restart().await;
    let res = restarted.get("/v1/jobs", Some(&secret)).await;
    assert_error("revoked token after restart", res, (403, "token_revoked"));
    let (status, _) = restarted.get("/v1/jobs", admin).await;
    assert_eq!(status, 200, "other tokens still work after the restart");
    let (status, _) = restarted.get("/v1/jobs", Some(&app.ingest_token)).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_ingest_token_cannot_call_any_admin_route() {
    let app = spawn_app().await;
    let ingest = Some(app.ingest_token.as_str());
    for path in [
        "/v1/admin/teams",
        "/v1/admin/projects",
        "/v1/admin/tokens",
        "/v1/admin/audit",
    ] {
        let res = app.get(path, ingest).await;
        assert_error(&format!("GET {path}"), res, (403, "insufficient_scope"));
    }
    let admin_id = token_id(&app, "bootstrap admin").await;
    for (path, body) in [
        ("/v1/admin/teams".to_string(), json!({"slug": "t2", "name": "T2"})),
        ("/v1/admin/projects".to_string(), json!({"slug": "p2"})),
        (
            "/v1/admin/tokens".to_string(),
            json!({"name": "escalate", "scopes": ["admin"]}),
        ),
        (format!("/v1/admin/tokens/{admin_id}/revoke"), json!({})),
    ] {
        let res = app.post(&path, ingest, &body).await;
        assert_error(&format!("POST {path}"), res, (403, "insufficient_scope"));
    }
    let res = app.delete("/v1/projects/default/memory", ingest).await;
    assert_error("purge with an ingest token", res, (403, "insufficient_scope"));

    assert_eq!(app.count("SELECT count(*) FROM teams").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM projects").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM api_tokens").await, 2);
    assert_eq!(
        app.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT count(*) FROM audit_log").await,
        1,
        "only the bootstrap"
    );
}

#[tokio::test]
async fn a_token_stops_working_once_it_expires() {
    let app = spawn_app().await;
    let expires = now_ms() + 1500;
    let (token, secret) = mint_full(
        &app,
        &app.admin_token,
        json!({"name": "short-lived", "scopes": ["read"], "expiresAtEpoch": expires}),
    )
    .await;
    assert_eq!(token["expiresAtEpoch"], expires);
    let (status, res) = app.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 200, "usable before it expires: {res}");

    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (status, res) = app.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 403, "{res}");
    let code = res["error"]["code"].as_str().unwrap();
    assert!(matches!(code, "token_expired" | "invalid_token"), "{res}");
    // On a server that never saw it, too.
    let restarted = app.restart().await;
    let (status, _) = restarted.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 403);

    // An expiry in the past or out of range is refused at minting.
    for at in [now_ms() - 1000, i64::MAX] {
        let res = app
            .post(
                "/v1/admin/tokens",
                Some(&app.admin_token),
                &json!({"name": "bad expiry", "scopes": ["read"], "expiresAtEpoch": at}),
            )
            .await;
        assert_error(&format!("expiresAtEpoch {at}"), res, (422, "invalid_field"));
    }
}

#[tokio::test]
async fn an_expired_token_is_refused_even_while_it_is_still_in_the_auth_cache() {
    let app = spawn_app().await;
    let expires = now_ms() + 1000;
    let (_, secret) = mint_full(
        &app,
        &app.admin_token,
        json!({"name": "short-lived", "scopes": ["read"], "expiresAtEpoch": expires}),
    )
    .await;
    // This use puts it in the auth cache (default lifetime 2 s).
    let (status, _) = app.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 200);
    // Past the expiry, still within the cache lifetime of that first use.
    let wait = (expires + 300 - now_ms()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let (status, res) = app.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(status, 403, "a token is refused as soon as it has expired: {res}");
    assert_eq!(res["error"]["code"], "token_expired");
}

#[tokio::test]
async fn only_a_superadmin_mints_superadmin_tokens_and_unknown_scopes_are_refused() {
    let app = spawn_app().await;
    let plain = app
        .mint(json!({"name": "plain admin", "scopes": ["admin"]}))
        .await;

    for scopes in [json!(["superadmin"]), json!(["read", "superadmin"])] {
        let res = app
            .post(
                "/v1/admin/tokens",
                Some(&plain),
                &json!({"name": "escalate", "scopes": scopes}),
            )
            .await;
        assert_error(
            &format!("plain admin mints {scopes}"),
            res,
            (403, "insufficient_scope"),
        );
    }
    for scopes in [json!(["root"]), json!(["READ"]), json!(["read", ""]), json!([])] {
        let res = app
            .post(
                "/v1/admin/tokens",
                Some(&plain),
                &json!({"name": "odd", "scopes": scopes}),
            )
            .await;
        assert_error(&format!("scopes {scopes}"), res, (422, "invalid_scope"));
    }
    let res = app
        .post(
            "/v1/admin/tokens",
            Some(&plain),
            &json!({"name": " ", "scopes": ["read"]}),
        )
        .await;
    assert_error("blank token name", res, (422, "invalid_field"));
    // A plain admin acts on its own team only.
    let (status, team) = app
        .post(
            "/v1/admin/teams",
            Some(&app.admin_token),
            &json!({"slug": "other", "name": "Other"}),
        )
        .await;
    assert_eq!(status, 201);
    let res = app
        .post(
            "/v1/admin/tokens",
            Some(&plain),
            &json!({"name": "x", "teamId": team["team"]["id"], "scopes": ["read"]}),
        )
        .await;
    assert_error("plain admin mints in another team", res, (404, "team_not_found"));

    // What a plain admin may mint, and what a superadmin may.
    let (token, _) = mint_full(
        &app,
        &plain,
        json!({"name": "ci", "scopes": ["read", "ingest", "read"]}),
    )
    .await;
    assert_eq!(
        token["scopes"],
        json!(["ingest", "read"]),
        "deduplicated and ordered"
    );
    let (token, secret) = mint_full(
        &app,
        &app.admin_token,
        json!({"name": "second root", "scopes": ["superadmin"]}),
    )
    .await;
    assert_eq!(token["scopes"], json!(["superadmin"]));
    let (status, _) = app
        .post(
            "/v1/admin/teams",
            Some(&secret),
            &json!({"slug": "by-root", "name": "By root"}),
        )
        .await;
    assert_eq!(status, 201, "a superadmin token creates teams");

    assert_eq!(
        app.count("SELECT count(*) FROM api_tokens WHERE 'superadmin' = ANY(scopes)")
            .await,
        2,
        "the bootstrap admin and the one a superadmin minted"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM api_tokens WHERE name IN ('escalate', 'odd', 'x')")
            .await,
        0
    );
}

#[tokio::test]
async fn every_administrative_change_is_written_to_the_audit_log() {
    let app = spawn_app().await;
    let admin = Some(app.admin_token.as_str());
    let actor = token_id(&app, "bootstrap admin").await.to_string();

    let (status, team) = app
        .post("/v1/admin/teams", admin, &json!({"slug": "acme", "name": "Acme"}))
        .await;
    assert_eq!(status, 201);
    let team_id = team["team"]["id"].as_str().unwrap().to_string();
    let (status, project) = app
        .post("/v1/admin/projects", admin, &json!({"slug": "web"}))
        .await;
    assert_eq!(status, 201);
    let project_id = project["project"]["id"].as_str().unwrap().to_string();
    // Minted with a client request id, which the audit row keeps.
    let res = app
        .client
        .post(format!("{}/v1/admin/tokens", app.base))
        .bearer_auth(&app.admin_token)
        .header("x-request-id", "mint-req-1")
        .json(&json!({"name": "ci", "projectId": "web", "scopes": ["ingest"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201);
    let minted: Value = res.json().await.unwrap();
    let token_id = minted["token"]["id"].as_str().unwrap().to_string();
    let (status, _) = app
        .post(&format!("/v1/admin/tokens/{token_id}/revoke"), admin, &json!({}))
        .await;
    assert_eq!(status, 200);
    // Refused changes leave no trace.
    let (status, _) = app
        .post("/v1/admin/projects", admin, &json!({"slug": "web"}))
        .await;
    assert_eq!(status, 409);
    let (status, _) = app
        .post(
            "/v1/admin/tokens",
            admin,
            &json!({"name": "bad", "scopes": ["nope"]}),
        )
        .await;
    assert_eq!(status, 422);

    // The API: the default team's log, newest first; team.create is logged under the new team.
    let (status, log) = app.get("/v1/admin/audit", admin).await;
    assert_eq!(status, 200, "{log}");
    let entries: Vec<(String, String, String)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["targetType"].as_str().unwrap().to_string(),
                e["targetId"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("token.revoke", "api_token", token_id.as_str()),
        ("token.mint", "api_token", token_id.as_str()),
        ("project.create", "project", project_id.as_str()),
        ("bootstrap", "team", &app.team_id.to_string()),
    ]
    .into_iter()
    .map(|(a, t, i)| (a.into(), t.into(), i.into()))
    .collect();
    assert_eq!(entries, expected);
    for e in &log["entries"].as_array().unwrap()[..3] {
        assert_eq!(e["actorTokenId"], actor.as_str(), "{e}");
    }
    assert_eq!(log["entries"][1]["requestId"], "mint-req-1");
    assert_eq!(log["entries"][1]["detail"]["projectId"], project_id.as_str());
    assert_eq!(log["entries"][1]["detail"]["scopes"], json!(["ingest"]));

    let (status, log) = app.get(&format!("/v1/admin/audit?teamId={team_id}"), admin).await;
    assert_eq!(status, 200);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["action"], "team.create");
    assert_eq!(entries[0]["targetId"], team_id.as_str());
    assert_eq!(entries[0]["detail"]["slug"], "acme");

    // The table.
    let rows: Vec<(String, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT action, target_id, request_id FROM audit_log ORDER BY id")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    let actions: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        actions,
        vec![
            "bootstrap",
            "team.create",
            "project.create",
            "token.mint",
            "token.revoke"
        ]
    );
    assert_eq!(rows[1].1.as_deref(), Some(team_id.as_str()));
    assert_eq!(rows[3].2.as_deref(), Some("mint-req-1"));
    assert!(
        rows[1..]
            .iter()
            .all(|r| r.2.as_deref().is_some_and(|id| !id.is_empty())),
        "every API change records its request id: {rows:?}"
    );
}

#[tokio::test]
async fn a_project_scoped_admin_token_mints_lists_and_revokes_only_within_its_project() {
    let app = spawn_app().await;
    let (status, web) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "web"}),
        )
        .await;
    assert_eq!(status, 201);
    let web_id = web["project"]["id"].as_str().unwrap().to_string();
    let (token, web_admin) = mint_full(
        &app,
        &app.admin_token,
        json!({"name": "web admin", "projectId": "web", "scopes": ["admin", "read", "ingest"]}),
    )
    .await;
    assert_eq!(
        token["projectId"],
        web_id.as_str(),
        "a slug is resolved to the project id"
    );
    assert_eq!(token["scopes"], json!(["ingest", "read", "admin"]));
    let p = Some(web_admin.as_str());

    // Minting without a project gives a token of its own project, never a team-wide one.
    let (reader, reader_secret) = mint_full(
        &app,
        &web_admin,
        json!({"name": "web reader", "scopes": ["read"]}),
    )
    .await;
    assert_eq!(reader["projectId"], web_id.as_str());
    let (by_id, _) = mint_full(
        &app,
        &web_admin,
        json!({"name": "web ci", "projectId": web_id, "scopes": ["ingest"]}),
    )
    .await;
    assert_eq!(by_id["projectId"], web_id.as_str());
    for other in ["default".to_string(), app.project_id.to_string()] {
        let res = app
            .post(
                "/v1/admin/tokens",
                p,
                &json!({"name": "sneaky", "projectId": other, "scopes": ["read"]}),
            )
            .await;
        assert_error(
            &format!("mint for project {other}"),
            res,
            (404, "project_not_found"),
        );
    }

    // Listing shows the project's tokens only.
    let (status, list) = app.get("/v1/admin/tokens", p).await;
    assert_eq!(status, 200);
    let mut names: Vec<&str> = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["projectId"], web_id.as_str(), "{t}");
            t["name"].as_str().unwrap()
        })
        .collect();
    names.sort();
    assert_eq!(names, vec!["web admin", "web ci", "web reader"]);
    let (status, projects) = app.get("/v1/admin/projects", p).await;
    assert_eq!(status, 200);
    assert_eq!(projects["projects"].as_array().unwrap().len(), 1, "{projects}");
    assert_eq!(projects["projects"][0]["slug"], "web");

    // It cannot revoke a token outside its project, and the attempt changes nothing.
    for name in ["bootstrap ingest", "bootstrap admin"] {
        let id = token_id(&app, name).await;
        let res = app
            .post(&format!("/v1/admin/tokens/{id}/revoke"), p, &json!({}))
            .await;
        assert_error(&format!("revoke {name}"), res, (404, "token_not_found"));
    }
    assert_eq!(
        app.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL")
            .await,
        0
    );
    let (status, _) = app.get("/v1/jobs", Some(&app.ingest_token)).await;
    assert_eq!(status, 200, "the default project's token still works");
    let res = app.post("/v1/admin/projects", p, &json!({"slug": "mine"})).await;
    assert_error(
        "project token creates a project",
        res,
        (403, "team_token_required"),
    );

    // Within its project it revokes.
    let (status, _) = app
        .post(
            &format!("/v1/admin/tokens/{}/revoke", id_of(&reader)),
            p,
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let res = app.get("/v1/jobs", Some(&reader_secret)).await;
    assert_error("revoked web reader", res, (403, "token_revoked"));

    let stored: Vec<(String, Option<Uuid>)> =
        sqlx::query_as("SELECT name, project_id FROM api_tokens WHERE name LIKE 'web %' ORDER BY name")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    let web_uuid: Uuid = web_id.parse().unwrap();
    assert_eq!(
        stored,
        vec![
            ("web admin".to_string(), Some(web_uuid)),
            ("web ci".to_string(), Some(web_uuid)),
            ("web reader".to_string(), Some(web_uuid)),
        ]
    );
}
