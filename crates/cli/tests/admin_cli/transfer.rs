//! `cairn export` and `cairn import`: a project's memory out as JSON Lines
//! and into another project, in requests small enough to need several, with
//! nothing added the second time, bad lines named as the file numbers them,
//! and no way into another team's project.

use cairn_testkit::{TestApp, spawn_app};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{admin, cairn};

/// Three sessions with two observations each and a summary each.
async fn seed(app: &TestApp) {
    for s in 0..3 {
        let session = Uuid::new_v4();
        sqlx::query(
            "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, status)
             VALUES ($1, $2, $3, 'claude-code', $4, 'ended')",
        )
        .bind(session)
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(format!("agent-session-{s}"))
        .execute(&app.pool)
        .await
        .unwrap();
        for o in 0..2 {
            sqlx::query(
                "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, narrative)
                 VALUES ($1, $2, $3, $4, $5, 'discovery', $6, $7)",
            )
            .bind(Uuid::new_v4())
            .bind(app.team_id)
            .bind(app.project_id)
            .bind(session)
            .bind(format!("seed:{s}:{o}"))
            .bind(format!("Observation {o} of session {s}"))
            .bind("x".repeat(300) + if s == 2 { " quokka" } else { "" })
            .execute(&app.pool)
            .await
            .unwrap();
        }
        sqlx::query(
            "INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, request)
             VALUES ($1, $2, $3, $4, $5, 'session', 'what was asked')",
        )
        .bind(Uuid::new_v4())
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(session)
        .bind(format!("seed:summary:{s}"))
        .execute(&app.pool)
        .await
        .unwrap();
    }
}

async fn rows_in(app: &TestApp, slug: &str) -> i64 {
    app.count(&format!(
        "SELECT (SELECT count(*) FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.slug = '{slug}')
              + (SELECT count(*) FROM observations o JOIN projects p ON p.id = o.project_id WHERE p.slug = '{slug}')
              + (SELECT count(*) FROM summaries m JOIN projects p ON p.id = m.project_id WHERE p.slug = '{slug}')"
    ))
    .await
}

fn without_ids(jsonl: &str) -> Vec<String> {
    let mut lines: Vec<String> = jsonl
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            for k in ["id", "projectId", "sessionId"] {
                v.as_object_mut().unwrap().remove(k);
            }
            v.to_string()
        })
        .collect();
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread")]
async fn export_then_import_into_another_project_in_parts_adds_everything_once() {
    let app = spawn_app().await;
    seed(&app).await;
    assert!(admin(&app, &["projects", "create", "copy"]).await.ok);

    let export = admin(&app, &["export", "--project", "default"]).await;
    assert!(export.ok, "{}", export.stderr);
    assert_eq!(export.stdout.lines().count(), 3 + 6 + 3);

    // 1,200 bytes a request: several requests, the later ones re-sending
    // the sessions their observations and summaries refer to.
    let import_args = ["import", "--project", "copy", "--request-bytes", "1200", "--json"];
    let run = cairn(&app, &app.admin_token, &import_args, export.stdout.as_bytes()).await;
    assert!(run.ok, "{}", run.stderr);
    let totals = run.json();
    assert!(totals["requests"].as_u64().unwrap() > 2, "{totals}");
    assert_eq!(
        totals["imported"],
        json!({"sessions": 3, "observations": 6, "summaries": 3})
    );
    assert_eq!(
        totals["existing"],
        json!({"sessions": 0, "observations": 0, "summaries": 0})
    );
    assert_eq!(rows_in(&app, "copy").await, 12);

    let copy = admin(&app, &["export", "--project", "copy"]).await;
    assert_eq!(without_ids(&copy.stdout), without_ids(&export.stdout));
    let (status, found) = app
        .post(
            "/v1/search",
            Some(&app.admin_token),
            &json!({"projectId": "copy", "query": "quokka", "limit": 10}),
        )
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["observations"].as_array().unwrap().len(), 2, "{found}");

    // Again: nothing new.
    let run = cairn(&app, &app.admin_token, &import_args, export.stdout.as_bytes()).await;
    assert!(run.ok, "{}", run.stderr);
    let totals = run.json();
    assert_eq!(
        totals["imported"],
        json!({"sessions": 0, "observations": 0, "summaries": 0})
    );
    assert_eq!(
        totals["existing"],
        json!({"sessions": 3, "observations": 6, "summaries": 3})
    );
    assert_eq!(rows_in(&app, "copy").await, 12);

    // Through files, with the human summary line.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl");
    let file = file.to_str().unwrap();
    assert!(
        admin(&app, &["export", "--project", "default", "-o", file])
            .await
            .ok
    );
    let run = admin(&app, &["import", "--project", "copy", "-i", file]).await;
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.starts_with("imported 0 session(s)"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_line_is_named_by_its_line_in_the_file_and_nothing_of_its_request_is_written() {
    let app = spawn_app().await;
    seed(&app).await;
    assert!(admin(&app, &["projects", "create", "copy"]).await.ok);
    let export = admin(&app, &["export", "--project", "default"]).await;
    let mut lines: Vec<String> = export.stdout.lines().map(str::to_string).collect();
    let mut bad: Value = serde_json::from_str(&lines[4]).unwrap();
    bad["origin"] = json!("invented");
    lines[4] = bad.to_string();
    let body = lines.join("\n") + "\n";
    let run = cairn(
        &app,
        &app.admin_token,
        &["import", "--project", "copy"],
        body.as_bytes(),
    )
    .await;
    assert!(!run.ok);
    assert!(
        run.stderr.contains("invalid_lines") && run.stderr.contains("line 5: `origin`"),
        "{}",
        run.stderr
    );
    assert_eq!(rows_in(&app, "copy").await, 0);

    let run = cairn(
        &app,
        &app.admin_token,
        &["import", "--project", "copy"],
        b"{\"type\":\n",
    )
    .await;
    assert!(!run.ok);
    assert!(run.stderr.contains("line 1: not a JSON record"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_team_can_neither_export_nor_import_the_project() {
    let app = spawn_app().await;
    seed(&app).await;
    let (status, team) = app
        .post(
            "/v1/admin/teams",
            Some(&app.admin_token),
            &json!({"slug": "team-b", "name": "B"}),
        )
        .await;
    assert_eq!(status, 201, "{team}");
    let b = app
        .mint(json!({"name": "b", "teamId": team["team"]["id"], "scopes": ["read", "admin"]}))
        .await;
    let project = app.project_id.to_string();
    let export = cairn(&app, &b, &["export", "--project", &project], b"").await;
    assert!(!export.ok);
    assert!(export.stderr.contains("project_not_found"), "{}", export.stderr);
    assert!(export.stdout.is_empty());

    let own = admin(&app, &["export", "--project", "default"]).await;
    let run = cairn(
        &app,
        &b,
        &["import", "--project", &project],
        own.stdout.as_bytes(),
    )
    .await;
    assert!(!run.ok);
    assert!(run.stderr.contains("project_not_found"), "{}", run.stderr);
    assert_eq!(rows_in(&app, "default").await, 12);
}

/// The test API takes bodies up to 256 KiB; `cairn import` starts at 1 MiB
/// a request, is refused (413, or the connection closed mid-body) and goes on
/// in smaller requests without losing or doubling a record.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_limit_under_the_request_size_is_met_by_smaller_requests() {
    let app = spawn_app().await;
    seed(&app).await;
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative)
         SELECT gen_random_uuid(), $1, $2, 'bulk:' || g, 'discovery', 'bulk ' || g, repeat('words ', 200)
           FROM generate_series(1, 600) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    assert!(admin(&app, &["projects", "create", "copy"]).await.ok);
    let export = admin(&app, &["export", "--project", "default"]).await;
    assert!(export.stdout.len() > 512 * 1024, "{}", export.stdout.len());
    let run = cairn(
        &app,
        &app.admin_token,
        &["import", "--project", "copy", "--json"],
        export.stdout.as_bytes(),
    )
    .await;
    assert!(run.ok, "{}", run.stderr);
    let totals = run.json();
    assert_eq!(
        totals["imported"],
        json!({"sessions": 3, "observations": 606, "summaries": 3})
    );
    assert!(totals["requests"].as_u64().unwrap() >= 3, "{totals}");
    assert_eq!(rows_in(&app, "copy").await, 612);
}

/// Figures for the README, not a check: `cargo test -p cairn --test admin_cli
/// -- --ignored --nocapture transfer_figures` (CAIRN_FIGURE_OBSERVATIONS, default 100,000).
#[tokio::test(flavor = "multi_thread")]
#[ignore]
async fn transfer_figures() {
    let n: i64 = std::env::var("CAIRN_FIGURE_OBSERVATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let app = spawn_app().await;
    sqlx::query(
        "WITH s AS (
             INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, status)
             SELECT gen_random_uuid(), $1, $2, 'claude-code', 'figure-' || g, 'ended'
               FROM generate_series(1, greatest($3 / 100, 1)) g
             RETURNING id)
         INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, facts,
                                   narrative, files_modified, created_at)
         SELECT gen_random_uuid(), $1, $2, (SELECT id FROM s OFFSET (g % greatest($3 / 100, 1)) LIMIT 1),
                'figure:' || g, 'discovery', 'Observation number ' || g,
                ARRAY['a fact about module ' || g, 'another fact'], repeat('narrative words ', 20),
                ARRAY['src/module_' || g || '.rs'], now() - make_interval(secs => g)
           FROM generate_series(1, $3) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(n)
    .execute(&app.pool)
    .await
    .unwrap();
    assert!(admin(&app, &["projects", "create", "copy"]).await.ok);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl");
    let file = file.to_str().unwrap();

    let started = std::time::Instant::now();
    let run = admin(&app, &["export", "--project", "default", "-o", file]).await;
    assert!(run.ok, "{}", run.stderr);
    let export = started.elapsed();
    let bytes = std::fs::metadata(file).unwrap().len();

    let started = std::time::Instant::now();
    let run = admin(&app, &["import", "--project", "copy", "-i", file, "--json"]).await;
    assert!(run.ok, "{}", run.stderr);
    let import = started.elapsed();
    let requests = run.json()["requests"].as_u64().unwrap();

    let started = std::time::Instant::now();
    let run = admin(&app, &["import", "--project", "copy", "-i", file, "--json"]).await;
    assert!(run.ok, "{}", run.stderr);
    let again = started.elapsed();
    assert_eq!(run.json()["imported"]["observations"], 0);
    println!(
        "{n} observations, {} MB of JSON Lines: export {:.1} s ({:.0} obs/s), import {:.1} s ({:.0} obs/s, {requests} requests), re-import {:.1} s",
        bytes / 1_000_000,
        export.as_secs_f64(),
        n as f64 / export.as_secs_f64(),
        import.as_secs_f64(),
        n as f64 / import.as_secs_f64(),
        again.as_secs_f64()
    );
}
