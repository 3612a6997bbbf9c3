//! Tenant isolation: a token sees and touches only its own team (and, for a project token, its
//! own project). Ids of other tenants answer 404, exactly like ids that do not exist.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

/// Team B, created by the bootstrap superadmin: its id, its project and a token of it
/// (`ingest`, `read`, `admin`, not `superadmin`).
struct TeamB {
    team_id: Uuid,
    project_id: Uuid,
    token: String,
}

async fn create_team_b(app: &TestApp) -> TeamB {
    let (status, team) = app
        .post(
            "/v1/admin/teams",
            Some(&app.admin_token),
            &json!({"slug": "team-b", "name": "Team B"}),
        )
        .await;
    assert_eq!(status, 201, "{team}");
    let team_id: Uuid = team["team"]["id"].as_str().unwrap().parse().unwrap();
    let (status, project) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"teamId": team_id, "slug": "b-app"}),
        )
        .await;
    assert_eq!(status, 201, "{project}");
    assert_eq!(project["project"]["teamId"], team_id.to_string());
    let project_id = project["project"]["id"].as_str().unwrap().parse().unwrap();
    let token = app
        .mint(json!({"name": "team b", "teamId": team_id, "scopes": ["ingest", "read", "admin"]}))
        .await;
    TeamB {
        team_id,
        project_id,
        token,
    }
}

/// Team A's real data: a Claude Code session of one turn, and a manual memory.
async fn fill_team_a(app: &TestApp) {
    let s = "team-a-session";
    let hooks = [
        cc(s, "SessionStart", json!({"source": "startup"})),
        cc(s, "UserPromptSubmit", json!({"prompt": "fix the login test"})),
        cc(
            s,
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": "toolu_a1", "tool_input": {"file_path": "src/a.rs"}}),
        ),
        cc(s, "Stop", json!({"last_assistant_message": "Fixed."})),
    ];
    for body in hooks {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": "default", "content": "The login test needs a seeded user."}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
}

async fn ids(app: &TestApp, sql: &str) -> Vec<Uuid> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_all(&app.pool)
        .await
        .unwrap()
}

/// A digest of every row of the data tables: any insert, update or delete changes it.
async fn fingerprint(app: &TestApp) -> Vec<(String, i64, String)> {
    let mut out = vec![];
    // Whole rows, except api_tokens' `last_used_at`, which any use of a token may touch.
    for (table, row) in [
        ("sessions", "t::text"),
        ("agent_events", "t::text"),
        ("generation_jobs", "t::text"),
        ("observations", "t::text"),
        ("summaries", "t::text"),
        (
            "api_tokens",
            "(t.id, t.team_id, t.project_id, t.scopes, t.expires_at, t.revoked_at)::text",
        ),
    ] {
        let sql = format!(
            "SELECT count(*), coalesce(md5(string_agg({row}, '|' ORDER BY t.id)), '') FROM {table} t"
        );
        let (count, digest): (i64, String) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_one(&app.pool)
            .await
            .unwrap();
        out.push((table.to_string(), count, digest));
    }
    out
}

fn assert_not_found(what: &str, status: u16, body: &Value, code: &str) {
    assert_eq!(status, 404, "{what}: {body}");
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
}

#[tokio::test]
async fn a_token_of_another_team_gets_404_for_every_id_and_cannot_write_into_the_team() {
    let app = spawn_app().await;
    let b = create_team_b(&app).await;
    fill_team_a(&app).await;

    let sessions = ids(&app, "SELECT id FROM sessions").await;
    let events = ids(&app, "SELECT id FROM agent_events ORDER BY id").await;
    let jobs = ids(&app, "SELECT id FROM generation_jobs ORDER BY id").await;
    let memories = ids(&app, "SELECT id FROM observations").await;
    assert_eq!(
        (sessions.len(), events.len(), memories.len()),
        (1, 4, 1),
        "team A has one session of four events and one memory"
    );
    assert!(!jobs.is_empty(), "team A's turn made generation jobs");
    let a_session = sessions[0];
    // Team A's own tokens do see them, so a 404 below is isolation, not a missing row.
    let (status, _) = app
        .get(&format!("/v1/sessions/{a_session}"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200);
    let (status, _) = app
        .get(&format!("/v1/jobs/{}", jobs[0]), Some(&app.admin_token))
        .await;
    assert_eq!(status, 200);

    let before = fingerprint(&app).await;
    let t = Some(b.token.as_str());

    // Every read or change by id.
    let (status, body) = app.get(&format!("/v1/sessions/{a_session}"), t).await;
    assert_not_found("GET session", status, &body, "session_not_found");
    let (status, body) = app
        .post(&format!("/v1/sessions/{a_session}/end"), t, &json!({}))
        .await;
    assert_not_found("end session", status, &body, "session_not_found");
    for event in &events {
        let (status, body) = app.get(&format!("/v1/events/{event}"), t).await;
        assert_not_found("GET event", status, &body, "event_not_found");
        let (status, body) = app.get(&format!("/v1/events/{event}/observations"), t).await;
        assert_not_found("GET event observations", status, &body, "event_not_found");
    }
    for job in &jobs {
        let (status, body) = app.get(&format!("/v1/jobs/{job}"), t).await;
        assert_not_found("GET job", status, &body, "job_not_found");
        let (status, body) = app.post(&format!("/v1/jobs/{job}/retry"), t, &json!({})).await;
        assert_not_found("retry job", status, &body, "job_not_found");
        let (status, body) = app.post(&format!("/v1/jobs/{job}/cancel"), t, &json!({})).await;
        assert_not_found("cancel job", status, &body, "job_not_found");
    }
    let (status, body) = app.delete(&format!("/v1/memories/{}", memories[0]), t).await;
    assert_not_found("delete memory", status, &body, "memory_not_found");
    for project in [app.project_id.to_string(), "default".to_string()] {
        let (status, body) = app.delete(&format!("/v1/projects/{project}/memory"), t).await;
        assert_not_found("purge A's project", status, &body, "project_not_found");
    }

    // Writes into A's project, named by id and by slug.
    let now = chrono::Utc::now().timestamp_millis();
    for project in [app.project_id.to_string(), "default".to_string()] {
        let event = json!({"projectId": project, "sourceType": "hook", "eventType": "tool_use",
                           "occurredAtEpoch": now, "contentSessionId": "b-writes-here",
                           "payload": {"tool_name": "Bash"}});
        let (status, body) = app.post("/v1/events", t, &event).await;
        assert_not_found("POST event", status, &body, "project_not_found");
        let (status, body) = app.post("/v1/events/batch", t, &json!({"events": [event]})).await;
        assert_not_found("POST event batch", status, &body, "project_not_found");
        let (status, body) = app
            .post(
                "/v1/sessions/start",
                t,
                &json!({"projectId": project, "contentSessionId": "b-writes-here",
                        "metadata": {"prompt": "hello"}}),
            )
            .await;
        assert_not_found("start session", status, &body, "project_not_found");
        let (status, body) = app
            .post(
                "/v1/memories",
                t,
                &json!({"projectId": project, "content": "planted by team B"}),
            )
            .await;
        assert_not_found("POST memory", status, &body, "project_not_found");
        let (status, body) = app
            .post(
                &format!("/v1/hooks/claude-code?project={project}"),
                t,
                &cc("b-writes-here", "SessionStart", json!({"source": "startup"})),
            )
            .await;
        assert_not_found("hook", status, &body, "project_not_found");
    }

    // Team B's own project cannot be tied to A's session either.
    let (status, body) = app
        .post(
            "/v1/events",
            t,
            &json!({"projectId": b.project_id, "sourceType": "api", "eventType": "note",
                    "occurredAtEpoch": now, "serverSessionId": a_session}),
        )
        .await;
    assert_not_found("event on A's session", status, &body, "session_not_found");
    let (status, body) = app
        .post(
            "/v1/memories",
            t,
            &json!({"projectId": b.project_id, "serverSessionId": a_session, "content": "x"}),
        )
        .await;
    assert_not_found("memory on A's session", status, &body, "session_not_found");

    // Lists show nothing of A.
    let (status, list) = app.get("/v1/jobs", t).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["total"], 0, "{list}");
    assert_eq!(list["jobs"], json!([]));

    let (status, info) = app.get("/v1/info", t).await;
    assert_eq!(status, 200);
    assert!(
        info["queue"].as_object().unwrap().values().all(|n| n == 0),
        "B's queue counts hold none of A's jobs: {info}"
    );
    let (_, info) = app.get("/v1/info", Some(&app.admin_token)).await;
    assert_eq!(info["queue"]["queued"], jobs.len(), "{info}");

    // A's administration is out of reach of B's (non-superadmin) admin token.
    let a_ingest_token: Uuid =
        sqlx::query_scalar("SELECT id FROM api_tokens WHERE name = 'bootstrap ingest'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let (status, body) = app
        .post(
            &format!("/v1/admin/tokens/{a_ingest_token}/revoke"),
            t,
            &json!({}),
        )
        .await;
    assert_not_found("revoke A's token", status, &body, "token_not_found");
    let (status, body) = app
        .post(
            &format!("/v1/admin/tokens/{a_ingest_token}/revoke?teamId={}", app.team_id),
            t,
            &json!({}),
        )
        .await;
    assert_not_found("revoke A's token naming team A", status, &body, "team_not_found");
    for path in ["/v1/admin/tokens", "/v1/admin/audit", "/v1/admin/projects"] {
        let (status, body) = app.get(&format!("{path}?teamId={}", app.team_id), t).await;
        assert_not_found(path, status, &body, "team_not_found");
    }

    assert_eq!(fingerprint(&app).await, before, "team A's rows are unchanged");
    // And nothing was written anywhere for team B.
    for table in ["sessions", "agent_events", "generation_jobs", "observations"] {
        let sql = format!("SELECT count(*) FROM {table} WHERE team_id = '{}'", b.team_id);
        assert_eq!(app.count(&sql).await, 0, "{table} of team B");
    }
    // A's ingest token still works.
    let (status, _) = app
        .get(&format!("/v1/sessions/{a_session}"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_project_token_cannot_read_or_write_another_project_of_the_same_team() {
    let app = spawn_app().await;
    let (status, y) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "project-y"}),
        )
        .await;
    assert_eq!(status, 201, "{y}");
    assert_eq!(y["project"]["teamId"], app.team_id.to_string());
    let y_id = y["project"]["id"].as_str().unwrap().to_string();
    let y_token = app
        .mint(json!({"name": "y ingest", "projectId": y_id, "scopes": ["ingest", "read"]}))
        .await;

    let (status, res) = app
        .post(
            "/v1/events",
            Some(&y_token),
            &json!({"projectId": y_id, "sourceType": "hook", "eventType": "tool_use",
                    "occurredAtEpoch": chrono::Utc::now().timestamp_millis(),
                    "contentSessionId": "y-session", "payload": {"tool_name": "Bash"}}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let event_id = res["event"]["id"].as_str().unwrap().to_string();
    let session_id = res["event"]["serverSessionId"].as_str().unwrap().to_string();
    let (status, _) = app
        .get(&format!("/v1/sessions/{session_id}"), Some(&y_token))
        .await;
    assert_eq!(status, 200, "Y's own token reads Y's session");

    // The default project's token (project X) sees none of it.
    let x = Some(app.ingest_token.as_str());
    let (status, body) = app.get(&format!("/v1/sessions/{session_id}"), x).await;
    assert_not_found("X reads Y's session", status, &body, "session_not_found");
    let (status, body) = app.get(&format!("/v1/events/{event_id}"), x).await;
    assert_not_found("X reads Y's event", status, &body, "event_not_found");
    let (status, body) = app
        .post(&format!("/v1/sessions/{session_id}/end"), x, &json!({}))
        .await;
    assert_not_found("X ends Y's session", status, &body, "session_not_found");
    let (status, list) = app.get("/v1/jobs", x).await;
    assert_eq!(status, 200);
    assert_eq!(list["total"], 0, "X lists none of Y's jobs: {list}");

    // Nor can it write into Y, by id or by slug.
    for project in [y_id.as_str(), "project-y"] {
        let (status, body) = app
            .post(
                "/v1/memories",
                x,
                &json!({"projectId": project, "content": "planted by X"}),
            )
            .await;
        assert_not_found("X writes a memory into Y", status, &body, "project_not_found");
        let (status, body) = app
            .post(
                &format!("/v1/hooks/claude-code?project={project}"),
                x,
                &cc("x-into-y", "SessionStart", json!({})),
            )
            .await;
        assert_not_found("X posts a hook into Y", status, &body, "project_not_found");
    }
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) FROM sessions WHERE project_id = '{}'",
            app.project_id
        ))
        .await,
        0
    );
    assert_eq!(app.count("SELECT count(*) FROM observations").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
}

#[tokio::test]
async fn a_team_admin_without_superadmin_cannot_list_another_teams_projects() {
    let app = spawn_app().await;
    let b = create_team_b(&app).await;

    let (status, body) = app
        .get(
            &format!("/v1/admin/projects?teamId={}", app.team_id),
            Some(&b.token),
        )
        .await;
    assert_not_found("B lists A's projects", status, &body, "team_not_found");

    // Without a teamId it lists its own team's projects only.
    let (status, list) = app.get("/v1/admin/projects", Some(&b.token)).await;
    assert_eq!(status, 200, "{list}");
    let slugs: Vec<&str> = list["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, vec!["b-app"]);
    let (status, teams) = app.get("/v1/admin/teams", Some(&b.token)).await;
    assert_eq!(status, 200);
    assert_eq!(teams["teams"].as_array().unwrap().len(), 1, "{teams}");
    assert_eq!(teams["teams"][0]["id"], b.team_id.to_string());

    // The superadmin may list team B's projects.
    let (status, list) = app
        .get(
            &format!("/v1/admin/projects?teamId={}", b.team_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(list["projects"][0]["slug"], "b-app");
}

#[tokio::test]
async fn two_teams_with_a_project_of_the_same_slug_each_reach_their_own_every_time() {
    let app = spawn_app().await;
    let b = create_team_b(&app).await;
    let (status, res) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"teamId": b.team_id, "slug": "default"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    for (token, content) in [
        (&app.ingest_token, "Team A keeps its invoices in euros."),
        (&b.token, "Team B keeps its invoices in yen."),
    ] {
        let (status, res) = app
            .post(
                "/v1/memories",
                Some(token),
                &json!({"projectId": "default", "content": content}),
            )
            .await;
        assert_eq!(status, 201, "{res}");
    }
    // Twice each, interleaved: the second lookup of a name is the remembered one.
    for _ in 0..2 {
        for (token, own, other) in [(&app.admin_token, "euros", "yen"), (&b.token, "yen", "euros")] {
            let (status, res) = app
                .get(
                    "/v1/search?project=default&query=invoices&mode=fulltext",
                    Some(token),
                )
                .await;
            assert_eq!(status, 200, "{res}");
            let text = res["results"].to_string();
            assert!(text.contains(own) && !text.contains(other), "{res}");
        }
        // Team A's token naming team B's project by id is still refused.
        let (status, res) = app
            .get(
                &format!("/v1/search?project={}&query=invoices", b.project_id),
                Some(&app.admin_token),
            )
            .await;
        assert_eq!(
            (status, res["error"]["code"].as_str()),
            (404, Some("project_not_found")),
            "{res}"
        );
    }
}
