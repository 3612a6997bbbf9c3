//! Privilege boundaries: no token sees or touches a token that outranks it,
//! a project admin reads only its project's audit entries, `/v1/info` needs
//! `read`, an ingest token writes but neither reads others' events through a
//! duplicate nor deletes memory, and every memory deletion is audited.

use serde_json::{Value, json};

use crate::helpers::{TestApp, cc, spawn_app};

fn code(res: &(u16, Value)) -> (u16, &str) {
    (res.0, res.1["error"]["code"].as_str().unwrap_or("<none>"))
}

async fn second_project(app: &TestApp) -> String {
    let (status, res) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "other", "name": "Other"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    res["project"]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_team_admin_neither_lists_nor_revokes_a_superadmin_token() {
    let app = spawn_app().await;
    let team_admin = app.mint(json!({"name": "team-admin", "scopes": ["admin"]})).await;
    let (status, listed) = app.get("/v1/admin/tokens", Some(&team_admin)).await;
    assert_eq!(status, 200, "{listed}");
    let names: Vec<&str> = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"team-admin"), "{names:?}");
    assert!(
        listed["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["scopes"].as_array().unwrap().contains(&json!("superadmin"))),
        "a team admin must not see superadmin tokens: {listed}"
    );
    let superadmin_id: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM api_tokens WHERE 'superadmin' = ANY(scopes)")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let res = app
        .post(
            &format!("/v1/admin/tokens/{superadmin_id}/revoke"),
            Some(&team_admin),
            &json!({}),
        )
        .await;
    assert_eq!(code(&res), (404, "token_not_found"), "{}", res.1);
    let revoked = app
        .count(&format!(
            "SELECT count(*) FROM api_tokens WHERE id = '{superadmin_id}' AND revoked_at IS NOT NULL"
        ))
        .await;
    assert_eq!(revoked, 0, "the superadmin token must still work");
    let (status, _) = app.get("/v1/admin/tokens", Some(&app.admin_token)).await;
    assert_eq!(status, 200);
    // It still manages what it covers: an ingest token of its team.
    let ingest_id: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM api_tokens WHERE scopes = '{ingest,read}'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let (status, res) = app
        .post(
            &format!("/v1/admin/tokens/{ingest_id}/revoke"),
            Some(&team_admin),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
}

#[tokio::test]
async fn a_project_admin_reads_only_its_projects_audit_entries() {
    let app = spawn_app().await;
    let other = second_project(&app).await;
    let project_admin = app
        .mint(json!({"name": "p-admin", "projectId": app.project_id, "scopes": ["admin"]}))
        .await;
    // One change in each project, and one team-level change.
    app.mint(json!({"name": "in-default", "projectId": app.project_id, "scopes": ["ingest"]}))
        .await;
    app.mint(json!({"name": "in-other", "projectId": other, "scopes": ["ingest"]}))
        .await;
    let (status, res) = app.get("/v1/admin/audit", Some(&project_admin)).await;
    assert_eq!(status, 200, "{res}");
    let entries = res["entries"].as_array().unwrap();
    assert!(!entries.is_empty(), "{res}");
    for e in entries {
        assert_eq!(
            e["projectId"].as_str(),
            Some(app.project_id.to_string().as_str()),
            "a project admin sees only its project: {e}"
        );
    }
    assert!(
        !res.to_string().contains(&other),
        "nothing about the other project: {res}"
    );
    let (_, all) = app.get("/v1/admin/audit", Some(&app.admin_token)).await;
    assert!(
        all.to_string().contains(&other),
        "the team admin sees both: {all}"
    );
    assert!(all.to_string().contains("project.create"), "{all}");
}

#[tokio::test]
async fn info_needs_read_and_health_hides_counts_without_admin() {
    let app = spawn_app().await;
    let ingest_only = app.mint(json!({"name": "hook", "scopes": ["ingest"]})).await;
    let res = app.get("/v1/info", Some(&ingest_only)).await;
    assert_eq!(code(&res), (403, "insufficient_scope"), "{}", res.1);
    let (status, _) = app.get("/v1/info", Some(&app.ingest_token)).await;
    assert_eq!(status, 200, "ingest+read reads info");
    let (_, health) = app.get("/api/health", None).await;
    assert!(health.get("jobs").is_none(), "{health}");
    assert_eq!(health["postgres"], "ok", "{health}");
    let (_, health) = app.get("/api/health", Some(&app.admin_token)).await;
    assert!(health["jobs"]["by_status"].is_object(), "{health}");
}

#[tokio::test]
async fn a_duplicate_answers_with_the_callers_own_body_not_the_stored_one() {
    let app = spawn_app().await;
    let writer = app.mint(json!({"name": "laptop-a", "scopes": ["ingest"]})).await;
    let prober = app.mint(json!({"name": "laptop-b", "scopes": ["ingest"]})).await;
    let event = |secret: &str| {
        json!({"projectId": "default", "sourceType": "api", "eventType": "note",
               "occurredAtEpoch": 1_780_000_000_000i64, "sourceEventId": "evt-1",
               "payload": {"text": secret}})
    };
    let (status, first) = app
        .post("/v1/events", Some(&writer), &event("the stored secret plan"))
        .await;
    assert_eq!(status, 201, "{first}");
    let (status, dup) = app.post("/v1/events", Some(&prober), &event("probe")).await;
    assert_eq!(status, 200, "{dup}");
    assert_eq!(
        dup["event"]["id"], first["event"]["id"],
        "still answered as the stored event"
    );
    assert!(
        !dup.to_string().contains("the stored secret plan"),
        "a duplicate must not reveal the stored body: {dup}"
    );
    assert_eq!(dup["event"]["payload"]["text"], "probe", "{dup}");
    // Batches too.
    let (status, batch) = app
        .post(
            "/v1/events/batch",
            Some(&prober),
            &json!({"events": [event("batch probe")]}),
        )
        .await;
    assert_eq!(status, 201, "{batch}");
    assert!(!batch.to_string().contains("the stored secret plan"), "{batch}");
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
}

async fn generated_observation(app: &TestApp) -> String {
    let id = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title)
         VALUES ($1, $2, $3, 'test:' || $1, 'discovery', 'generated one')",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    id.to_string()
}

#[tokio::test]
async fn deleting_memory_needs_admin_unless_the_token_wrote_it_and_is_audited() {
    let app = spawn_app().await;
    let generated = generated_observation(&app).await;
    let res = app
        .delete(&format!("/v1/memories/{generated}"), Some(&app.ingest_token))
        .await;
    assert_eq!(code(&res), (403, "insufficient_scope"), "{}", res.1);
    assert_eq!(app.count("SELECT count(*) FROM observations").await, 1);

    // An ingest token deletes its own manual memory, not another token's.
    let (status, mine) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": "default", "content": "mine"}),
        )
        .await;
    assert_eq!(status, 201, "{mine}");
    let other = app
        .mint(json!({"name": "other-laptop", "scopes": ["ingest"]}))
        .await;
    let (_, theirs) = app
        .post(
            "/v1/memories",
            Some(&other),
            &json!({"projectId": "default", "content": "theirs"}),
        )
        .await;
    let res = app
        .delete(
            &format!("/v1/memories/{}", theirs["memory"]["id"].as_str().unwrap()),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(code(&res), (403, "insufficient_scope"), "{}", res.1);
    let (status, _) = app
        .delete(
            &format!("/v1/memories/{}", mine["memory"]["id"].as_str().unwrap()),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200);

    // An admin deletes a generated one.
    let (status, _) = app
        .delete(&format!("/v1/memories/{generated}"), Some(&app.admin_token))
        .await;
    assert_eq!(status, 200);
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action = 'memory.delete' AND project_id IS NOT NULL")
        .await;
    assert_eq!(audited, 2, "both deletions are audited");
}

#[tokio::test]
async fn session_start_context_still_reaches_an_ingest_only_token() {
    let app = spawn_app().await;
    app.post(
        "/v1/memories",
        Some(&app.admin_token),
        &json!({"projectId": "default", "content": "Deploys go through the blue pipeline"}),
    )
    .await;
    let hook_only = app
        .mint(json!({"name": "hook", "projectId": app.project_id, "scopes": ["ingest"]}))
        .await;
    let (status, res) = app
        .post(
            "/v1/hooks/claude-code",
            Some(&hook_only),
            &cc("s-ctx", "SessionStart", json!({"source": "startup"})),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    assert!(res.to_string().contains("blue pipeline"), "{res}");
}
