//! Team tokens find their project from where the agent works: rules on the
//! git remote or a path prefix (admin, audited), `/v1/projects/resolve`, and
//! `/v1/whoami` for `cairn doctor`.

use serde_json::json;

use crate::helpers::{cc, spawn_app};

#[tokio::test]
async fn a_team_token_lands_by_git_remote_or_path_prefix_and_unknown_is_project_unresolved() {
    let app = spawn_app().await;
    let team_token = app
        .mint(json!({"name": "dev laptop", "scopes": ["ingest", "read"]}))
        .await;
    let (status, web) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "web"}),
        )
        .await;
    assert_eq!(status, 201);
    let web_id = web["project"]["id"].as_str().unwrap().to_string();
    for (project, kind, pattern) in [
        (web_id.as_str(), "git_remote", "https://github.com/acme/web.git"),
        (&app.project_id.to_string(), "path_prefix", "/home/dev/acme/"),
    ] {
        let (status, res) = app
            .post(
                &format!("/v1/admin/projects/{project}/rules"),
                Some(&app.admin_token),
                &json!({"kind": kind, "pattern": pattern}),
            )
            .await;
        assert_eq!(status, 201, "{res}");
    }
    let (status, listed) = app
        .get(
            &format!("/v1/admin/projects/{web_id}/rules"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        listed["rules"][0]["pattern"], "github.com/acme/web",
        "stored normalised"
    );

    let post = |query: &'static str, session: &'static str| {
        let token = team_token.clone();
        let app = &app;
        async move {
            app.post(
                &format!("/v1/hooks/claude-code?{query}"),
                Some(&token),
                &cc(session, "SessionStart", json!({"source": "startup"})),
            )
            .await
        }
    };
    // The scp form of the same remote, from a worktree elsewhere on disk.
    let (status, _) = post(
        "gitRemote=git%40github.com%3Aacme%2Fweb.git&repoRoot=%2Ftmp%2Fwt",
        "s-web",
    )
    .await;
    assert_eq!(status, 200);
    // A subdirectory under the path prefix (the body's cwd is /home/dev/app: the query wins).
    let (status, _) = post("cwd=%2Fhome%2Fdev%2Facme%2Fapi%2Fsrc", "s-api").await;
    assert_eq!(status, 200);
    let landed: Vec<(String, uuid::Uuid)> =
        sqlx::query_as("SELECT external_session_id, project_id FROM sessions ORDER BY external_session_id")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(landed[0], ("s-api".into(), app.project_id));
    assert_eq!(landed[1].0, "s-web");
    assert_eq!(landed[1].1.to_string(), web_id);

    let (status, res) = post("cwd=%2Fsrv%2Felsewhere", "s-none").await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (404, Some("project_unresolved")),
        "{res}"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM sessions").await,
        2,
        "nothing stored"
    );

    // What `cairn doctor` asks.
    let (status, res) = app
        .get(
            "/v1/projects/resolve?gitRemote=ssh%3A%2F%2Fgit%40github.com%2Facme%2Fweb",
            Some(&team_token),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(
        (res["project"]["slug"].as_str(), res["matchedBy"].as_str()),
        (Some("web"), Some("git_remote"))
    );
    let (status, res) = app
        .get("/v1/projects/resolve?cwd=%2Fsrv", Some(&team_token))
        .await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (404, Some("project_unresolved"))
    );
    let (status, res) = app.get("/v1/projects/resolve", Some(&app.ingest_token)).await;
    assert_eq!((status, res["matchedBy"].as_str()), (200, Some("token")));
}

#[tokio::test]
async fn rules_are_admin_only_audited_unique_and_checked() {
    let app = spawn_app().await;
    let project = app.project_id;
    let rule = json!({"kind": "path_prefix", "pattern": "/work/api"});
    let (status, _) = app
        .post(
            &format!("/v1/admin/projects/{project}/rules"),
            Some(&app.ingest_token),
            &rule,
        )
        .await;
    assert_eq!(status, 403);
    let (status, created) = app
        .post(
            &format!("/v1/admin/projects/{project}/rules"),
            Some(&app.admin_token),
            &rule,
        )
        .await;
    assert_eq!(status, 201);
    let (status, res) = app
        .post(
            &format!("/v1/admin/projects/{project}/rules"),
            Some(&app.admin_token),
            &rule,
        )
        .await;
    assert_eq!((status, res["error"]["code"].as_str()), (409, Some("rule_taken")));
    for bad in [
        json!({"kind": "path_prefix", "pattern": "relative/path"}),
        json!({"kind": "git_remote", "pattern": "not a remote"}),
    ] {
        let (status, res) = app
            .post(
                &format!("/v1/admin/projects/{project}/rules"),
                Some(&app.admin_token),
                &bad,
            )
            .await;
        assert_eq!(
            (status, res["error"]["code"].as_str()),
            (422, Some("invalid_pattern"))
        );
    }
    let id = created["rule"]["id"].as_str().unwrap();
    let (status, _) = app
        .delete(&format!("/v1/admin/project-rules/{id}"), Some(&app.admin_token))
        .await;
    assert_eq!(status, 200);
    let (status, _) = app
        .delete(&format!("/v1/admin/project-rules/{id}"), Some(&app.admin_token))
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        app.count("SELECT count(*) FROM audit_log WHERE action LIKE 'project_rule.%'")
            .await,
        2
    );
}

#[tokio::test]
async fn whoami_names_the_token_and_its_scopes_without_its_secret() {
    let app = spawn_app().await;
    let (status, me) = app.get("/v1/whoami", Some(&app.ingest_token)).await;
    assert_eq!(status, 200);
    assert_eq!(me["projectId"], json!(app.project_id));
    assert_eq!(me["scopes"], json!(["ingest", "read"]));
    assert!(me["name"].as_str().is_some_and(|n| !n.is_empty()), "{me}");
    assert!(!me.to_string().contains(&app.ingest_token));
    assert_eq!(app.get("/v1/whoami", None).await.0, 401);
    assert_eq!(app.get("/v1/whoami", Some("nope")).await.0, 403);
}
