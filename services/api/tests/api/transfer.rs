//! Export and import of a project's memory as JSON Lines: an export imported
//! into another project gives the same rows there, searchable, with its
//! references rewritten; a second import adds nothing; a bad line writes
//! nothing; another team can neither read nor write the project.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, spawn_app};

/// Two sessions, three observations (one with no session) and a summary in
/// the default project, written as the generator would.
async fn seed(app: &TestApp) {
    let (s1, s2) = (Uuid::new_v4(), Uuid::new_v4());
    for (id, ext) in [(s1, "agent-session-1"), (s2, "agent-session-2")] {
        sqlx::query(
            "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, cwd, status, metadata, started_at)
             VALUES ($1, $2, $3, 'claude-code', $4, '/work/app', 'ended', '{\"k\": 1}', now() - interval '1 hour')",
        )
        .bind(id)
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(ext)
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let observations = [
        (
            Some(s1),
            "bugfix",
            "Login test flaked on the token clock",
            "src/auth/clock.rs",
        ),
        (
            Some(s2),
            "decision",
            "Zebrafish cache keyed by tenant",
            "src/cache.rs",
        ),
        (
            None,
            "discovery",
            "Manual note about the deploy",
            "deploy/helm/values.yaml",
        ),
    ];
    for (i, (session, kind, title, file)) in observations.into_iter().enumerate() {
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, facts,
                                      narrative, concepts, files_modified, prompt_number, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, ARRAY['fact one', 'fact two'], 'The narrative.',
                     ARRAY['gotcha'], ARRAY[$8], 1, now() - make_interval(mins => $9))",
        )
        .bind(Uuid::new_v4())
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(session)
        .bind(format!("seed:{i}"))
        .bind(kind)
        .bind(title)
        .bind(file)
        .bind(10 - i as i32)
        .execute(&app.pool)
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, prompt_number,
                                request, learned, completed)
         VALUES ($1, $2, $3, $4, 'seed:summary', 'turn', 1, 'Fix the flaky login test',
                 'The clock skew was the cause', 'Pinned the clock')",
    )
    .bind(Uuid::new_v4())
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(s1)
    .execute(&app.pool)
    .await
    .unwrap();
}

async fn create_project(app: &TestApp, slug: &str) -> Uuid {
    let (status, body) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": slug}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body["project"]["id"].as_str().unwrap().parse().unwrap()
}

/// The export's status, content type and lines.
async fn export(app: &TestApp, project: &str, token: &str) -> (u16, String, Vec<Value>) {
    let res = app
        .client
        .get(format!("{}/v1/projects/{project}/export", app.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let content_type = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = res.text().await.unwrap();
    let lines = if status == 200 {
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    } else {
        Vec::new()
    };
    (status, content_type, lines)
}

async fn import(app: &TestApp, project: &str, token: &str, body: String) -> (u16, Value) {
    app.post_raw(
        &format!("/v1/projects/{project}/import"),
        Some(token),
        body.into_bytes(),
        "application/x-ndjson",
    )
    .await
}

fn ndjson(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A record without what differs between projects (ids, project, session ids).
fn content(record: &Value) -> Value {
    let mut r = record.clone();
    for key in ["id", "projectId", "sessionId"] {
        r.as_object_mut().unwrap().remove(key);
    }
    r
}

fn contents(lines: &[Value]) -> BTreeSet<String> {
    lines.iter().map(|l| content(l).to_string()).collect()
}

async fn search(app: &TestApp, project: Uuid, query: &str) -> Vec<Value> {
    let (status, body) = app
        .post(
            "/v1/search",
            Some(&app.admin_token),
            &json!({"projectId": project, "query": query, "limit": 10}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["observations"].as_array().unwrap().clone()
}

#[tokio::test]
async fn export_imported_into_another_project_gives_the_same_rows_searchable_once() {
    let app = spawn_app().await;
    seed(&app).await;
    let target = create_project(&app, "copy").await;

    let (status, content_type, lines) = export(&app, "default", &app.admin_token).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "application/x-ndjson");
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session",
            "session",
            "observation",
            "observation",
            "observation",
            "summary"
        ]
    );

    let (status, body) = import(&app, "copy", &app.admin_token, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["lines"], 6);
    assert_eq!(
        body["imported"],
        json!({"sessions": 2, "observations": 3, "summaries": 1})
    );

    // The same records in the target project, under ids of its own (the
    // source still holds the originals), pointing at its own sessions.
    let (_, _, copied) = export(&app, &target.to_string(), &app.admin_token).await;
    assert_eq!(contents(&copied), contents(&lines));
    let copied_sessions: BTreeSet<&str> = copied
        .iter()
        .filter(|l| l["type"] == "session")
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    for record in &copied {
        assert_eq!(record["projectId"], target.to_string());
        assert!(!lines.iter().any(|l| l["id"] == record["id"]), "ids rewritten");
        if let Some(session) = record["sessionId"].as_str() {
            assert!(copied_sessions.contains(session), "{record}");
        }
    }
    let summary = copied.iter().find(|l| l["type"] == "summary").unwrap();
    let session_of_summary = copied.iter().find(|l| l["id"] == summary["sessionId"]).unwrap();
    assert_eq!(session_of_summary["externalSessionId"], "agent-session-1");

    // Searchable in the target (the search column is filled on insert), and
    // waiting for the generator's embedding backfill.
    let hits = search(&app, target, "zebrafish").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["projectId"], target.to_string());
    let unembedded = app
        .count(&format!(
            "SELECT count(*) FROM observations o WHERE o.project_id = '{target}'
               AND NOT EXISTS (SELECT 1 FROM observation_embeddings e WHERE e.observation_id = o.id)"
        ))
        .await;
    assert_eq!(unembedded, 3);

    // A second import adds nothing.
    let (status, body) = import(&app, "copy", &app.admin_token, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["imported"],
        json!({"sessions": 0, "observations": 0, "summaries": 0})
    );
    assert_eq!(
        body["existing"],
        json!({"sessions": 2, "observations": 3, "summaries": 1})
    );
    let rows = app
        .count(&format!(
            "SELECT (SELECT count(*) FROM sessions WHERE project_id = '{target}')
                  + (SELECT count(*) FROM observations WHERE project_id = '{target}')
                  + (SELECT count(*) FROM summaries WHERE project_id = '{target}')"
        ))
        .await;
    assert_eq!(rows, 6);
    assert_eq!(search(&app, target, "zebrafish").await.len(), 1);

    // Audited.
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action IN ('project.import', 'project.export')")
        .await;
    assert_eq!(audited, 4);
}

#[tokio::test]
async fn a_purged_project_restored_from_its_export_keeps_its_ids() {
    let app = spawn_app().await;
    seed(&app).await;
    let (_, _, lines) = export(&app, "default", &app.admin_token).await;

    // Into the same project, nothing is new.
    let (status, body) = import(&app, "default", &app.admin_token, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["imported"],
        json!({"sessions": 0, "observations": 0, "summaries": 0})
    );

    let (status, _) = app
        .delete("/v1/projects/default/memory", Some(&app.admin_token))
        .await;
    assert_eq!(status, 200);
    let (status, body) = import(&app, "default", &app.admin_token, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["imported"],
        json!({"sessions": 2, "observations": 3, "summaries": 1})
    );
    let (_, _, restored) = export(&app, "default", &app.admin_token).await;
    let ids = |ls: &[Value]| ls.iter().map(|l| l["id"].to_string()).collect::<BTreeSet<_>>();
    assert_eq!(ids(&restored), ids(&lines));
    assert_eq!(contents(&restored), contents(&lines));
}

#[tokio::test]
async fn a_bad_line_is_named_and_nothing_is_written() {
    let app = spawn_app().await;
    seed(&app).await;
    let target = create_project(&app, "copy").await;
    let (_, _, lines) = export(&app, "default", &app.admin_token).await;
    let rows_in_target = || async {
        app.count(&format!(
            "SELECT (SELECT count(*) FROM sessions WHERE project_id = '{target}')
                  + (SELECT count(*) FROM observations WHERE project_id = '{target}')"
        ))
        .await
    };

    // Line 2 is not JSON, line 4 has a status no session has, line 5 an
    // unknown type; the good lines are not written either.
    let mut body = ndjson(&lines[..1]);
    body.push_str("{not json\n\n");
    let mut bad_status = lines[1].clone();
    bad_status["status"] = json!("paused");
    body.push_str(&format!("{bad_status}\n{{\"type\":\"event\",\"id\":\"x\"}}\n"));
    body.push_str(&ndjson(&lines[2..]));
    let (status, res) = import(&app, "copy", &app.admin_token, body).await;
    assert_eq!(status, 422, "{res}");
    assert_eq!(res["error"]["code"], "invalid_lines");
    let message = res["error"]["message"].as_str().unwrap();
    for named in ["line 2:", "line 4:", "line 5:"] {
        assert!(message.contains(named), "{message}");
    }
    assert!(
        !message.contains("line 1:") && !message.contains("line 6:"),
        "{message}"
    );
    assert_eq!(rows_in_target().await, 0);

    // An observation whose session is neither in the request nor the project.
    let orphan = lines
        .iter()
        .find(|l| l["type"] == "observation" && l["sessionId"].is_string())
        .unwrap();
    let (status, res) = import(
        &app,
        "copy",
        &app.admin_token,
        ndjson(std::slice::from_ref(orphan)),
    )
    .await;
    assert_eq!(status, 422, "{res}");
    assert!(
        res["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line 1: session"),
        "{res}"
    );
    assert_eq!(rows_in_target().await, 0);

    // U+0000, an out-of-range time and a missing field.
    for (line, why) in [
        (
            json!({"type": "observation", "id": Uuid::new_v4(), "kind": "x", "title": "a\u{0}b", "createdAtEpoch": 1}),
            "U+0000",
        ),
        (
            json!({"type": "summary", "id": Uuid::new_v4(), "sessionId": Uuid::new_v4(), "scope": "turn", "createdAtEpoch": i64::MAX}),
            "out of range",
        ),
        (
            json!({"type": "session", "id": Uuid::new_v4(), "agent": "claude-code", "startedAtEpoch": 1}),
            "externalSessionId",
        ),
    ] {
        let (status, res) = import(&app, "copy", &app.admin_token, ndjson(&[line])).await;
        assert_eq!(status, 422, "{res}");
        assert!(
            res["error"]["message"].as_str().unwrap().contains(why),
            "{why}: {res}"
        );
    }
    assert_eq!(rows_in_target().await, 0);

    // Over the body limit: 413, not a hang or a 500.
    let huge = "x".repeat(3 * 1024 * 1024);
    let (status, res) = import(&app, "copy", &app.admin_token, huge).await;
    assert_eq!(status, 413, "{res}");
}

#[tokio::test]
async fn another_team_and_lesser_scopes_can_neither_export_nor_import() {
    let app = spawn_app().await;
    seed(&app).await;
    let (_, _, lines) = export(&app, "default", &app.admin_token).await;

    let (status, team) = app
        .post(
            "/v1/admin/teams",
            Some(&app.admin_token),
            &json!({"slug": "team-b", "name": "Team B"}),
        )
        .await;
    assert_eq!(status, 201, "{team}");
    let team_b = team["team"]["id"].as_str().unwrap().to_string();
    let b_admin = app
        .mint(json!({"name": "b", "teamId": team_b, "scopes": ["ingest", "read", "admin"]}))
        .await;
    let a = app.project_id.to_string();
    let (status, _, _) = export(&app, &a, &b_admin).await;
    assert_eq!(status, 404);
    let (status, res) = import(&app, &a, &b_admin, ndjson(&lines)).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (404, Some("project_not_found"))
    );

    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read", "ingest"]}))
        .await;
    let (status, _, _) = export(&app, "default", &reader).await;
    assert_eq!(status, 403);
    let (status, _) = import(&app, "default", &reader, ndjson(&lines)).await;
    assert_eq!(status, 403);
    let (status, _, _) = export(&app, "default", "not-a-token").await;
    assert!(status == 401 || status == 403, "{status}");
    assert_eq!(
        app.count("SELECT count(*) FROM sessions").await,
        2,
        "nothing was written by the refused imports"
    );
}

#[tokio::test]
async fn a_large_project_is_exported_page_by_page_without_gaps() {
    let app = spawn_app().await;
    // 1,203 observations, several sharing a timestamp (the page cursor is
    // the time and the id).
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, created_at)
         SELECT gen_random_uuid(), $1, $2, 'bulk:' || i, 'discovery', 'note ' || i,
                timestamptz '2026-01-01' + make_interval(secs => i / 7)
           FROM generate_series(1, 1203) AS i",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    let (status, _, lines) = export(&app, "default", &app.admin_token).await;
    assert_eq!(status, 200);
    assert_eq!(lines.len(), 1203);
    let ids: BTreeSet<String> = lines.iter().map(|l| l["id"].to_string()).collect();
    assert_eq!(ids.len(), 1203);
}

#[tokio::test]
async fn a_session_the_target_already_has_by_agent_session_id_takes_the_imported_records() {
    let app = spawn_app().await;
    seed(&app).await;
    let target = create_project(&app, "copy").await;
    // The agent's session already reached the target live, under an id of its own.
    let live = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id)
         VALUES ($1, $2, $3, 'claude-code', 'agent-session-1')",
    )
    .bind(live)
    .bind(app.team_id)
    .bind(target)
    .execute(&app.pool)
    .await
    .unwrap();
    let (_, _, lines) = export(&app, "default", &app.admin_token).await;
    let (status, body) = import(&app, "copy", &app.admin_token, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["imported"],
        json!({"sessions": 1, "observations": 3, "summaries": 1})
    );
    assert_eq!(body["existing"]["sessions"], 1);
    let attached = app
        .count(&format!(
            "SELECT (SELECT count(*) FROM observations WHERE session_id = '{live}')
                  + (SELECT count(*) FROM summaries WHERE session_id = '{live}')"
        ))
        .await;
    assert_eq!(
        attached, 2,
        "the bugfix observation and the summary of agent-session-1"
    );
}

#[tokio::test]
async fn a_project_admin_token_transfers_only_its_own_project() {
    let app = spawn_app().await;
    seed(&app).await;
    create_project(&app, "other").await;
    let own = app
        .mint(json!({"name": "project admin", "projectId": "default", "scopes": ["admin", "read"]}))
        .await;
    let (status, _, lines) = export(&app, "default", &own).await;
    assert_eq!((status, lines.len()), (200, 6));
    let (status, _, _) = export(&app, "other", &own).await;
    assert_eq!(status, 404);
    let (status, _) = import(&app, "other", &own, ndjson(&lines)).await;
    assert_eq!(status, 404);
    let (status, body) = import(&app, "default", &own, ndjson(&lines)).await;
    assert_eq!(status, 200, "{body}");
}
