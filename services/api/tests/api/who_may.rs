//! The README's "Who may do what" table, row by row: each kind of token on
//! each kind of route, the superadmin beside another team's projects, and
//! who may end a session.

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Status of `method path` for `token` (a body for POSTs).
async fn status(app: &TestApp, token: &str, method: &str, path: &str) -> u16 {
    match method {
        "GET" => app.get(path, Some(token)).await.0,
        "POST" => {
            let body = json!({"projectId": "default", "sourceType": "api", "eventType": "note",
                              "occurredAtEpoch": now_ms()});
            app.post(path, Some(token), &body).await.0
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn each_scope_reaches_what_the_table_says_and_nothing_else() {
    let app = spawn_app().await;
    let ingest = app.mint(json!({"name": "hook", "scopes": ["ingest"]})).await;
    let read = app.mint(json!({"name": "reader", "scopes": ["read"]})).await;
    let admin = app.mint(json!({"name": "admin", "scopes": ["admin"]})).await;
    let project = app.project_id;
    let search = format!("/v1/search?projectId={project}&query=deploy");
    let jobs = "/v1/jobs".to_string();
    let export = format!("/v1/projects/{project}/export");
    let tokens = "/v1/admin/tokens".to_string();
    let info = "/v1/info".to_string();
    let events = "/v1/events".to_string();
    // (route, ingest, read, admin): `admin` includes `read` and `ingest`.
    let table: [(&str, &String, u16, u16, u16); 6] = [
        ("POST", &events, 201, 403, 201),
        ("GET", &search, 403, 200, 200),
        ("GET", &jobs, 403, 200, 200),
        ("GET", &info, 403, 200, 200),
        ("GET", &export, 403, 403, 200),
        ("GET", &tokens, 403, 403, 200),
    ];
    let mut wrong = vec![];
    for (method, path, by_ingest, by_read, by_admin) in table {
        for (who, token, want) in [
            ("ingest", &ingest, by_ingest),
            ("read", &read, by_read),
            ("admin", &admin, by_admin),
        ] {
            let got = status(&app, token, method, path).await;
            if got != want {
                wrong.push(format!("{who} {method} {path}: {got}, the table says {want}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn the_superadmin_administers_every_team_but_reads_only_its_own_teams_memory() {
    let app = spawn_app().await;
    let root = Some(app.admin_token.as_str());
    let (status, team) = app
        .post("/v1/admin/teams", root, &json!({"slug": "acme", "name": "Acme"}))
        .await;
    assert_eq!(status, 201, "{team}");
    let acme = team["team"]["id"].as_str().unwrap().to_string();
    let (status, project) = app
        .post(
            "/v1/admin/projects",
            root,
            &json!({"slug": "web", "teamId": acme}),
        )
        .await;
    assert_eq!(status, 201, "{project}");
    let web = project["project"]["id"].as_str().unwrap().to_string();
    assert_eq!(project["project"]["teamId"], acme.as_str());

    let (status, listed) = app.get(&format!("/v1/admin/tokens?teamId={acme}"), root).await;
    assert_eq!(status, 200, "administration of another team: {listed}");
    for path in [
        format!("/v1/search?projectId={web}&query=x"),
        format!("/v1/projects/{web}/export"),
        format!("/v1/sessions?projectId={web}"),
    ] {
        let (status, res) = app.get(&path, root).await;
        assert_eq!(
            status, 404,
            "another team's memory is not the superadmin's to read: {path} {res}"
        );
    }
}

async fn start_session(app: &TestApp, token: &str, external: &str) -> String {
    let body = json!({"projectId": app.project_id, "contentSessionId": external,
                      "platformSource": "claude-code", "metadata": {"cwd": "/home/alice/secret-project"}});
    let (status, res) = app.post("/v1/sessions/start", Some(token), &body).await;
    assert!(status == 200 || status == 201, "{res}");
    res["session"]["id"].as_str().unwrap().to_string()
}

async fn end(app: &TestApp, token: &str, id: &str) -> (u16, Value) {
    app.post(&format!("/v1/sessions/{id}/end"), Some(token), &json!({}))
        .await
}

#[tokio::test]
async fn an_ingest_only_token_ends_only_the_sessions_it_opened() {
    let app = spawn_app().await;
    let alice = app
        .mint(json!({"name": "alice laptop", "scopes": ["ingest"]}))
        .await;
    let mallory = app
        .mint(json!({"name": "mallory laptop", "scopes": ["ingest"]}))
        .await;
    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read", "ingest"]}))
        .await;
    let session = start_session(&app, &alice, "alice-1").await;

    let (status, res): (u16, Value) = end(&app, &mallory, &session).await;
    assert_eq!(status, 404, "{res}");
    assert!(!res.to_string().contains("alice-1") && !res.to_string().contains("secret-project"));
    let ended: i64 = app
        .count(&format!(
            "SELECT count(*) FROM sessions WHERE id = '{session}' AND status = 'ended'"
        ))
        .await;
    assert_eq!(ended, 0, "the session goes on");

    let (status, res) = end(&app, &alice, &session).await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(res["session"]["status"], "ended");

    // A token that may read sessions may end any of the project's.
    let other = start_session(&app, &alice, "alice-2").await;
    let (status, _) = end(&app, &reader, &other).await;
    assert_eq!(status, 200);
}
