//! The dashboard's data endpoints over real Postgres (and a real heuristic
//! generator): sessions and a replayed session's timeline, PATCH of a
//! memory (audited, searchable by its new words only, its vector gone),
//! the queue's figures on known rows, and isolation between teams.

use std::time::{Duration, Instant};

use cairn_generator::{config::GeneratorConfig, worker};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

/// A heuristic generator inside the test process, on the app's database and Redis.
pub struct Generator {
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Generator {
    pub fn start(app: &TestApp) -> Self {
        let env: std::collections::HashMap<String, String> = [
            ("CAIRN_DATABASE_URL", app.database_url.as_str()),
            ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "5"),
            ("CAIRN_PROVIDER", "heuristic"),
            ("CAIRN_WORKERS", "2"),
            ("CAIRN_SWEEP_MS", "250"),
            ("CAIRN_LEASE_MS", "3000"),
            ("CAIRN_HEARTBEAT_MS", "500"),
            ("CAIRN_RETRY_BASE_MS", "200"),
            ("CAIRN_DRAIN_TIMEOUT_MS", "5000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let config = GeneratorConfig::from_env(&env).expect("generator config");
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(worker::run(config, shutdown.clone()));
        Self { shutdown, task }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

/// Waits until every job of the app's project is settled (none queued or processing).
pub async fn wait_settled(app: &TestApp, at_least: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (open, done): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE status IN ('queued', 'processing')),
                    count(*) FILTER (WHERE status = 'completed')
             FROM generation_jobs WHERE project_id = $1",
        )
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
        if open == 0 && done >= at_least {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{open} jobs still open, {done} completed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One Claude Code turn through the real hook endpoint: a prompt, a read,
/// a failing then passing test run, an edit, Stop.
pub async fn post_turn(app: &TestApp, session: &str, prompt: &str, file: &str) {
    let events = [
        cc(session, "UserPromptSubmit", json!({ "prompt": prompt })),
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": file }, "tool_response": { "content": "fn parse() {}" } }),
        ),
        cc(
            session,
            "PostToolUseFailure",
            json!({ "tool_name": "Bash", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "command": "cargo test" },
                    "error": "test parser::empty ... FAILED: index out of bounds" }),
        ),
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": file, "old_string": "a", "new_string": "b" },
                    "tool_response": { "ok": true } }),
        ),
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": "Bash", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "command": "cargo test" },
                    "tool_response": { "stdout": "test result: ok. 12 passed", "stderr": "" } }),
        ),
        cc(session, "Stop", json!({ "last_assistant_message": "Fixed it." })),
    ];
    for body in events {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
}

/// Another team, made by the bootstrap superadmin, and a team token of it
/// with `ingest`, `read` and `admin`.
pub async fn other_team(app: &TestApp) -> (Uuid, Uuid, String) {
    let (status, team) = app
        .post(
            "/v1/admin/teams",
            Some(&app.admin_token),
            &json!({"slug": "other", "name": "Other"}),
        )
        .await;
    assert_eq!(status, 201, "{team}");
    let team_id: Uuid = team["team"]["id"].as_str().unwrap().parse().unwrap();
    let (status, project) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"teamId": team_id, "slug": "other-app"}),
        )
        .await;
    assert_eq!(status, 201, "{project}");
    let project_id = project["project"]["id"].as_str().unwrap().parse().unwrap();
    let token = app
        .mint(json!({"name": "other", "teamId": team_id, "scopes": ["ingest", "read", "admin"]}))
        .await;
    (team_id, project_id, token)
}

async fn patch(app: &TestApp, path: &str, token: &str, body: &Value) -> (u16, Value) {
    let res = app
        .client
        .patch(format!("{}{path}", app.base))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_replayed_session_reads_back_turn_by_turn() {
    let app = spawn_app().await;
    let (status, _) = app
        .hook(cc("replay", "SessionStart", json!({"source": "startup"})))
        .await;
    assert_eq!(status, 200);
    post_turn(
        &app,
        "replay",
        "fix the parser panic on empty input",
        "src/parser.rs",
    )
    .await;
    post_turn(&app, "replay", "now make the lexer reject tabs", "src/lexer.rs").await;
    let generator = Generator::start(&app);
    wait_settled(&app, 4).await;
    generator.stop().await;

    let (status, list) = app
        .get(
            &format!("/v1/sessions?projectId={}", app.project_id),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200, "{list}");
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{list}");
    let s = &sessions[0];
    assert_eq!(s["externalSessionId"], "replay");
    assert_eq!(s["agent"], "claude-code");
    assert_eq!(s["cwd"], "/home/dev/app");
    assert_eq!(s["turns"], 2);
    let events_in_db = app
        .count(&format!(
            "SELECT count(*) FROM agent_events WHERE project_id = '{}'",
            app.project_id
        ))
        .await;
    assert_eq!(s["events"], events_in_db, "{s}");
    let observations_in_db = app
        .count(&format!(
            "SELECT count(*) FROM observations WHERE project_id = '{}'",
            app.project_id
        ))
        .await;
    assert!(observations_in_db >= 2, "the heuristic wrote observations");
    assert_eq!(s["observations"], observations_in_db);
    assert!(s["lastEventAt"].is_string() && s["startedAt"].is_string(), "{s}");
    assert!(list["nextCursor"].is_null());

    let id = s["id"].as_str().unwrap();
    let (status, timeline) = app
        .get(&format!("/v1/sessions/{id}/timeline"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{timeline}");
    assert_eq!(timeline["session"]["id"], id);
    assert_eq!(timeline["turnsTruncated"], false);
    let turns = timeline["turns"].as_array().unwrap();
    // Turn 0 holds the SessionStart, before any prompt.
    let numbers: Vec<i64> = turns
        .iter()
        .map(|t| t["promptNumber"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [0, 1, 2], "{timeline}");
    assert_eq!(turns[1]["prompt"], "fix the parser panic on empty input");
    assert_eq!(turns[2]["prompt"], "now make the lexer reject tabs");
    for turn in &turns[1..] {
        let events = turn["events"].as_array().unwrap();
        assert_eq!(events.len() as i64, turn["eventCount"].as_i64().unwrap());
        let kinds: Vec<&str> = events.iter().map(|e| e["eventType"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"UserPromptSubmit"), "{kinds:?}");
        assert_eq!(kinds.last(), Some(&"Stop"), "{kinds:?}");
        let tools: Vec<&str> = events.iter().filter_map(|e| e["toolName"].as_str()).collect();
        assert_eq!(tools, ["Read", "Bash", "Edit", "Bash"], "{turn}");
        assert!(!turn["observations"].as_array().unwrap().is_empty(), "{turn}");
        assert!(turn["observations"][0]["title"].is_string());
        let summaries = turn["summaries"].as_array().unwrap();
        assert_eq!(summaries.len(), 1, "{turn}");
        assert_eq!(summaries[0]["scope"], "turn");
        let jobs = turn["jobs"].as_array().unwrap();
        assert!(!jobs.is_empty(), "{turn}");
        for job in jobs {
            assert_eq!(job["status"], "completed", "{job}");
            assert_eq!(job["attempts"], 1);
            assert!(job["completedAt"].is_string());
        }
    }
    // Every observation of the session is under its turn.
    let listed: usize = turns
        .iter()
        .map(|t| t["observations"].as_array().unwrap().len())
        .sum();
    assert_eq!(listed as i64, observations_in_db);
}

#[tokio::test]
async fn sessions_page_newest_first_and_refuse_bad_input() {
    let app = spawn_app().await;
    for n in 0..5 {
        let (status, _) = app
            .hook(cc(
                &format!("page-{n}"),
                "SessionStart",
                json!({"source": "startup"}),
            ))
            .await;
        assert_eq!(status, 200);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut seen = Vec::new();
    let mut path = format!("/v1/sessions?projectId={}&limit=2", app.project_id);
    loop {
        let (status, page) = app.get(&path, Some(&app.ingest_token)).await;
        assert_eq!(status, 200, "{page}");
        for s in page["sessions"].as_array().unwrap() {
            seen.push(s["externalSessionId"].as_str().unwrap().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(c) => path = format!("/v1/sessions?projectId={}&limit=2&cursor={c}", app.project_id),
            None => break,
        }
    }
    assert_eq!(seen, ["page-4", "page-3", "page-2", "page-1", "page-0"]);

    for bad in ["limit=0", "limit=101", "cursor=nonsense", "cursor=1.2"] {
        let (status, body) = app
            .get(
                &format!("/v1/sessions?projectId={}&{bad}", app.project_id),
                Some(&app.ingest_token),
            )
            .await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "invalid_field");
    }
    let (status, _) = app.get("/v1/sessions", None).await;
    assert_eq!(status, 401);
    let (status, body) = app
        .get(
            &format!("/v1/sessions/{}/timeline", Uuid::now_v7()),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "session_not_found");
}

#[tokio::test]
async fn another_team_sees_none_of_it() {
    let app = spawn_app().await;
    post_turn(
        &app,
        "mine",
        "fix the parser panic on empty input",
        "src/parser.rs",
    )
    .await;
    let generator = Generator::start(&app);
    wait_settled(&app, 2).await;
    generator.stop().await;
    let (_, _, other) = other_team(&app).await;
    let (session_id,): (Uuid,) = sqlx::query_as("SELECT id FROM sessions WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let (observation_id,): (Uuid,) =
        sqlx::query_as("SELECT id FROM observations WHERE project_id = $1 LIMIT 1")
            .bind(app.project_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();

    let (status, body) = app
        .get(
            &format!("/v1/sessions?projectId={}", app.project_id),
            Some(&other),
        )
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("project_not_found"))
    );
    let (status, body) = app
        .get(&format!("/v1/sessions/{session_id}/timeline"), Some(&other))
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("session_not_found"))
    );
    let (status, body) = patch(
        &app,
        &format!("/v1/memories/{observation_id}"),
        &other,
        &json!({"title": "taken over"}),
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("memory_not_found"))
    );
    let title: String = sqlx::query_scalar("SELECT title FROM observations WHERE id = $1")
        .bind(observation_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_ne!(title, "taken over");
    // The other team's own session list is empty, not an error.
    let (status, body) = app.get("/v1/sessions?projectId=other-app", Some(&other)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["sessions"], json!([]));
}

async fn search_ids(app: &TestApp, words: &str) -> Vec<String> {
    let (status, body) = app
        .post(
            "/v1/search",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "query": words}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn an_edited_memory_is_audited_and_found_by_its_new_words_only() {
    let app = spawn_app().await;
    post_turn(
        &app,
        "edit",
        "fix the parser panic on empty input",
        "src/parser.rs",
    )
    .await;
    let generator = Generator::start(&app);
    wait_settled(&app, 2).await;
    generator.stop().await;
    let (id, old_title): (Uuid, String) = sqlx::query_as(
        "SELECT id, title FROM observations WHERE project_id = $1 ORDER BY created_at LIMIT 1",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    // A stored vector, which the edit must delete (the backfill re-embeds the new text).
    sqlx::query(
        "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
         VALUES ($1, $2, 'test-model', 2, '{1,0}')",
    )
    .bind(id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    assert!(search_ids(&app, "parser").await.contains(&id.to_string()));
    assert!(search_ids(&app, "zanzibar").await.is_empty());

    // Generated observations are the admin's to edit; the ingest token gets 403.
    let (status, body) = patch(
        &app,
        &format!("/v1/memories/{id}"),
        &app.ingest_token,
        &json!({"title": "nope"}),
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("insufficient_scope"))
    );

    let edit = json!({
        "title": "Zanzibar quirk in the tokenizer",
        "narrative": "The tokenizer mishandles the zanzibar marker.",
        "facts": ["zanzibar markers are skipped"],
        "concepts": ["gotcha"],
        "kind": "decision",
    });
    let (status, body) = patch(&app, &format!("/v1/memories/{id}"), &app.admin_token, &edit).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["memory"]["id"], id.to_string());
    assert_eq!(body["memory"]["kind"], "decision");
    assert!(
        body["memory"]["content"]
            .as_str()
            .unwrap()
            .contains("Zanzibar quirk"),
        "{body}"
    );
    let (title, subtitle, facts, kind): (String, String, Vec<String>, String) =
        sqlx::query_as("SELECT title, subtitle, facts, kind FROM observations WHERE id = $1")
            .bind(id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(title, "Zanzibar quirk in the tokenizer");
    assert_eq!(facts, ["zanzibar markers are skipped"]);
    assert_eq!(kind, "decision");
    let _ = subtitle; // untouched: not given
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) FROM observation_embeddings WHERE observation_id = '{id}'"
        ))
        .await,
        0,
        "the old vector is gone"
    );
    // Searchable by its new words, no longer by the old title's words.
    assert_eq!(search_ids(&app, "zanzibar").await, [id.to_string()]);
    let old_word = old_title
        .split_whitespace()
        .find(|w| w.len() > 4 && w.chars().all(char::is_alphabetic))
        .unwrap_or("parser")
        .to_string();
    let still_there = sqlx::query_scalar::<_, bool>(
        "SELECT search @@ plainto_tsquery('english', $2) FROM observations WHERE id = $1",
    )
    .bind(id)
    .bind(&old_word)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(!still_there, "`{old_word}` of the old title still matches");

    let (detail, actor): (Value, Option<Uuid>) = sqlx::query_as(
        "SELECT detail, actor_token_id FROM audit_log WHERE action = 'memory.update' AND target_id = $1",
    )
    .bind(id.to_string())
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(actor.is_some());
    assert_eq!(detail["before"]["title"], json!(old_title));
    assert_eq!(
        detail["fields"],
        json!(["title", "narrative", "facts", "concepts", "kind"])
    );

    for bad in [
        json!({}),
        json!({"kind": "poem"}),
        json!({"title": "   "}),
        json!({"title": "x".repeat(301)}),
        json!({"facts": [""]}),
        json!({"concepts": vec!["c"; 51]}),
        json!({"origin": "manual"}),
    ] {
        let (status, body) = patch(&app, &format!("/v1/memories/{id}"), &app.admin_token, &bad).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(
            ["invalid_field", "invalid_body"].contains(&body["error"]["code"].as_str().unwrap()),
            "{body}"
        );
    }
    let (status, _) = patch(
        &app,
        &format!("/v1/memories/{}", Uuid::now_v7()),
        &app.admin_token,
        &json!({"title": "x"}),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_manual_memory_is_its_writers_to_edit() {
    let app = spawn_app().await;
    let (status, created) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "content": "Deploys use the blue cluster"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["memory"]["id"].as_str().unwrap().to_string();
    let (status, body) = patch(
        &app,
        &format!("/v1/memories/{id}"),
        &app.ingest_token,
        &json!({"narrative": "Deploys use the green cluster"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // A manual memory's text as written follows the narrative; its title
    // (the first line as written) still says blue until it is edited too.
    assert_eq!(body["memory"]["content"], "Deploys use the green cluster");
    assert_eq!(search_ids(&app, "green").await, [id.as_str()]);
    assert_eq!(search_ids(&app, "blue").await, [id.as_str()]);
    let (status, body) = patch(
        &app,
        &format!("/v1/memories/{id}"),
        &app.ingest_token,
        &json!({"title": "Green cluster deploys"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(search_ids(&app, "blue").await.is_empty());
    assert_eq!(search_ids(&app, "green").await, [id.as_str()]);
    // Another ingest token of the team did not write it.
    let stranger = app
        .mint(json!({"name": "stranger", "scopes": ["ingest", "read"]}))
        .await;
    let (status, _) = patch(
        &app,
        &format!("/v1/memories/{id}"),
        &stranger,
        &json!({"narrative": "mine now"}),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn queue_figures_count_known_rows() {
    let app = spawn_app().await;
    let (other_team_id, other_project, other_token) = other_team(&app).await;
    sqlx::query(
        "INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, status, attempts,
             next_attempt_at, locked_by, lease_expires_at, completed_at, failed_at, cancelled_at, idempotency_key)
         SELECT gen_random_uuid(), $1, $2, 'observations', 'agent_event', status, attempts,
                now() - due_ago, locked_by, lease, completed, failed, cancelled, 'q:' || n
         FROM (VALUES
             (1, 'queued', 0, interval '120 seconds', NULL, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz),
             (2, 'queued', 0, interval '10 seconds', NULL, NULL, NULL, NULL, NULL),
             (3, 'queued', 1, interval '-1 hour', NULL, NULL, NULL, NULL, NULL),
             (4, 'processing', 1, interval '0', 'w1', now() + interval '1 minute', NULL, NULL, NULL),
             (5, 'failed', 5, interval '0', NULL, NULL, NULL, now(), NULL),
             (6, 'failed', 5, interval '0', NULL, NULL, NULL, now() - interval '3 days', NULL),
             (7, 'cancelled', 0, interval '0', NULL, NULL, NULL, NULL, now()),
             (8, 'completed', 1, interval '0', NULL, NULL, now() - interval '30 seconds', NULL, NULL),
             (9, 'completed', 1, interval '0', NULL, NULL, now() - interval '2 minutes', NULL, NULL),
             (10, 'completed', 1, interval '0', NULL, NULL, now() - interval '20 minutes', NULL, NULL),
             (11, 'completed', 1, interval '0', NULL, NULL, now() - interval '3 hours', NULL, NULL)
         ) AS t(n, status, attempts, due_ago, locked_by, lease, completed, failed, cancelled)",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    // The other team: one queued job, one completed, one failure.
    sqlx::query(
        "INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, status, completed_at,
             attempts, idempotency_key)
         VALUES (gen_random_uuid(), $1, $2, 'observations', 'agent_event', 'queued', NULL, 0, 'o:1'),
                (gen_random_uuid(), $1, $2, 'observations', 'agent_event', 'completed', now(), 1, 'o:2')",
    )
    .bind(other_team_id)
    .bind(other_project)
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail, created_at)
         SELECT (SELECT id FROM generation_jobs WHERE team_id = t.team LIMIT 1), t.team, t.project,
                'processing', t.to_status, 'test', t.detail::jsonb, now() - t.ago
         FROM (VALUES
             ($1::uuid, $2::uuid, 'queued', '{\"error\": \"transient: connection reset\"}', interval '1 hour'),
             ($1, $2, 'queued', '{\"error\": \"transient: 503\"}', interval '2 hours'),
             ($1, $2, 'failed', '{\"error\": \"parse_error: no <observation>\"}', interval '1 minute'),
             ($1, $2, 'queued', '{\"reason\": \"lease expired\", \"previous_owner\": \"w9\"}', interval '5 hours'),
             ($1, $2, 'failed', '{\"error\": \"something odd\"}', interval '1 minute'),
             ($1, $2, 'failed', '{\"error\": \"unrecoverable: 400\"}', interval '25 hours'),
             ($1, $2, 'queued', '{\"reason\": \"worker shutting down\"}', interval '1 minute'),
             ($3, $4, 'failed', '{\"error\": \"auth: bad key\"}', interval '1 minute')
         ) AS t(team, project, to_status, detail, ago)",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(other_team_id)
    .bind(other_project)
    .execute(&app.pool)
    .await
    .unwrap();

    let team_admin = app
        .mint(json!({"name": "team admin", "scopes": ["admin", "read"]}))
        .await;
    let (status, q) = app.get("/v1/admin/queue", Some(&team_admin)).await;
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["teamId"], app.team_id.to_string());
    assert_eq!(
        q["depth"],
        json!({"queued": 3, "processing": 1, "failed": 2, "cancelled": 1})
    );
    let age = q["oldestDueAgeSeconds"].as_f64().unwrap();
    assert!((119.0..200.0).contains(&age), "{age}");
    assert_eq!(q["completedLast5m"], 2);
    let minutes = q["completedPerMinute"].as_array().unwrap();
    assert_eq!(minutes.len(), 60);
    let total: i64 = minutes.iter().map(|m| m["count"].as_i64().unwrap()).sum();
    assert_eq!(total, 3, "the three of the last hour: {minutes:?}");
    assert_eq!(
        q["failuresByClass"],
        json!([
            {"class": "transient", "count": 2},
            {"class": "lease expired", "count": 1},
            {"class": "other", "count": 1},
            {"class": "parse_error", "count": 1},
        ])
    );

    // The superadmin reads every team by default, or one.
    let (status, all) = app.get("/v1/admin/queue", Some(&app.admin_token)).await;
    assert_eq!(status, 200, "{all}");
    assert!(all["teamId"].is_null());
    assert_eq!(all["depth"]["queued"], 4);
    assert_eq!(all["completedLast5m"], 3);
    let (status, one) = app
        .get(
            &format!("/v1/admin/queue?teamId={other_team_id}"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(
        one["depth"],
        json!({"queued": 1, "processing": 0, "failed": 0, "cancelled": 0})
    );
    assert_eq!(one["failuresByClass"], json!([{"class": "auth", "count": 1}]));
    assert!(one["oldestDueAgeSeconds"].as_f64().is_some());

    // A team admin reads only its own team; other scopes are refused.
    let (status, _) = app
        .get(
            &format!("/v1/admin/queue?teamId={}", app.team_id),
            Some(&other_token),
        )
        .await;
    assert_eq!(status, 404);
    let (status, own) = app.get("/v1/admin/queue", Some(&other_token)).await;
    assert_eq!(status, 200);
    assert_eq!(own["depth"]["queued"], 1);
    let (status, _) = app.get("/v1/admin/queue", Some(&app.ingest_token)).await;
    assert_eq!(status, 403);
    let (status, _) = app.get("/v1/admin/queue", None).await;
    assert_eq!(status, 401);
}

/// Seeds one session of `turns` turns of `events` tool events each (turn
/// 1 gets `first_turn_events` instead), straight into the database.
async fn seed_session(app: &TestApp, turns: i32, events: i32, first_turn_events: i32) -> Uuid {
    let session_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, prompt_counter)
         VALUES ($1, $2, $3, 'claude-code', $4, $5)",
    )
    .bind(session_id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(format!("big-{session_id}"))
    .bind(turns)
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO agent_events (id, team_id, project_id, session_id, source_adapter, source_type,
             event_type, idempotency_key, prompt_number, tool_name, payload, occurred_at)
         SELECT gen_random_uuid(), $1, $2, $3, 'claude-code', 'hook',
                CASE WHEN e = 1 THEN 'UserPromptSubmit' ELSE 'PostToolUse' END,
                'seed:' || $3 || ':' || t || ':' || e, t, CASE WHEN e = 1 THEN NULL ELSE 'Bash' END,
                CASE WHEN e = 1 THEN jsonb_build_object('prompt', 'prompt ' || t || ' ' || repeat('x', 600))
                     ELSE '{}'::jsonb END,
                now() - interval '1 day' + t * interval '1 minute' + e * interval '1 millisecond'
         FROM generate_series(1, $4::int) t,
              LATERAL generate_series(1, CASE WHEN t = 1 THEN $6::int ELSE $5::int END) e",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(session_id)
    .bind(turns)
    .bind(events)
    .bind(first_turn_events)
    .execute(&app.pool)
    .await
    .unwrap();
    session_id
}

#[tokio::test]
async fn a_timeline_is_bounded_to_200_turns_of_500_events() {
    let app = spawn_app().await;
    let id = seed_session(&app, 202, 2, 501).await;
    let (status, timeline) = app
        .get(&format!("/v1/sessions/{id}/timeline"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{timeline}");
    assert_eq!(timeline["turnsTruncated"], true);
    let turns = timeline["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 200);
    // The newest 200: turns 3..=202, oldest first.
    assert_eq!(turns[0]["promptNumber"], 3);
    assert_eq!(turns[199]["promptNumber"], 202);
    let prompt = turns[0]["prompt"].as_str().unwrap();
    assert_eq!(prompt.chars().count(), 500);
    assert!(prompt.starts_with("prompt 3 "));

    let id = seed_session(&app, 2, 3, 501).await;
    let (status, timeline) = app
        .get(&format!("/v1/sessions/{id}/timeline"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200);
    assert_eq!(timeline["turnsTruncated"], false);
    let first = &timeline["turns"][0];
    assert_eq!(first["eventCount"], 501);
    assert_eq!(first["events"].as_array().unwrap().len(), 500);
    assert_eq!(first["events"][0]["eventType"], "UserPromptSubmit");
    assert_eq!(timeline["turns"][1]["events"].as_array().unwrap().len(), 3);
}

/// Times the session list and the timeline over a large session:
/// `cargo test -p cairn-api --test api -- --ignored dashboard_data::measure --nocapture`.
#[tokio::test]
#[ignore]
async fn measure_the_session_reads() {
    let app = spawn_app().await;
    let big = seed_session(&app, 400, 500, 500).await;
    for _ in 0..99 {
        seed_session(&app, 5, 20, 20).await;
    }
    sqlx::query("ANALYZE").execute(&app.pool).await.unwrap();
    let time = |path: String| {
        let app = &app;
        async move {
            let mut times = Vec::new();
            for _ in 0..20 {
                let start = Instant::now();
                let (status, _) = app.get(&path, Some(&app.ingest_token)).await;
                assert_eq!(status, 200);
                times.push(start.elapsed());
            }
            times.sort();
            (times[10], times[18])
        }
    };
    let (median, p95) = time(format!("/v1/sessions/{big}/timeline")).await;
    println!("timeline of 400 turns x 500 events (200 x 500 returned): median {median:?}, p95 {p95:?}");
    let (median, p95) = time(format!("/v1/sessions?projectId={}&limit=100", app.project_id)).await;
    println!("session list, 100 sessions (one of 200,000 events): median {median:?}, p95 {p95:?}");
}
