//! Cairn embedded: the example program and the client, against fresh
//! databases, with no server process and no Redis reachable; twice on one
//! database (the schema migrates idempotently, the default tenant comes back
//! from its file); and the embedded path writing the same rows as the
//! server's hook route for the same session.

use std::{path::PathBuf, process::Command};

use cairn_core::{Cairn, client::Event, search::Hit};
use cairn_testkit::{cc, fresh_database, spawn_app};
use serde_json::{Value, json};
use sqlx::PgPool;

/// A port nothing listens on: any use of Redis would fail.
const NO_REDIS: &str = "redis://127.0.0.1:1";

fn example() -> PathBuf {
    // target/<profile>/deps/embedded-… → target/<profile>/examples/embedded
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/embedded");
    assert!(
        path.is_file(),
        "{} is missing (cargo test builds the examples)",
        path.display()
    );
    path
}

#[tokio::test]
async fn the_example_runs_twice_on_a_fresh_database_without_a_server_or_redis() {
    let url = fresh_database().await;
    let data = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    // Without the embedding model, then with it.
    let model = cairn_testkit::model_dir();
    for model_dir in [PathBuf::from("/nonexistent"), model] {
        let out = Command::new(example())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CAIRN_DATABASE_URL", &url)
            .env("CAIRN_DATA_DIR", data.path())
            .env("CAIRN_REDIS_URL", NO_REDIS)
            .env("CAIRN_EMBED_MODEL_DIR", &model_dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "exit {:?}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("generated inline: 3 jobs completed"), "{stdout}");
        assert!(
            stdout.contains("<cairn-context>") && stdout.contains("registry-creds"),
            "{stdout}"
        );
        outputs.push(stdout);
    }
    let pool = PgPool::connect(&url).await.unwrap();
    let teams: i64 = sqlx::query_scalar("SELECT count(*) FROM teams")
        .fetch_one(&pool)
        .await
        .unwrap();
    let sessions: i64 = sqlx::query_scalar("SELECT count(DISTINCT project_id) FROM sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        (teams, sessions),
        (1, 1),
        "the second run reused the default team and project"
    );
    // The second run finds both runs' sessions.
    assert_eq!(outputs[0].matches("session summary").count(), 1, "{}", outputs[0]);
    assert_eq!(outputs[1].matches("session summary").count(), 2, "{}", outputs[1]);
}

async fn open(url: &str, data: &std::path::Path) -> Cairn {
    let pool = PgPool::connect(url).await.unwrap();
    let mut options = cairn_core::client::Options::from_env().unwrap();
    options.data_dir = data.to_path_buf();
    options.embedder = None;
    Cairn::with_options(pool, options).await.unwrap()
}

#[tokio::test]
async fn the_client_migrates_twice_reuses_its_tenant_and_generates_through_the_state_machine() {
    let url = fresh_database().await;
    let data = tempfile::tempdir().unwrap();
    let first = open(&url, data.path()).await;
    let project = first.project();
    first.close().await;
    let cairn = open(&url, data.path()).await;
    assert_eq!(
        cairn.project(),
        project,
        "the default project comes back from its file"
    );
    let file: Value =
        serde_json::from_slice(&std::fs::read(data.path().join("tenant.json")).unwrap()).unwrap();
    assert_eq!(file["project_id"], project.id.to_string());

    let s = "lib-1";
    cairn.start_session(s, "/work/app").await.unwrap();
    cairn
        .capture(Event::prompt(s, "Why does SESSION_TTL expire early?"))
        .await
        .unwrap();
    cairn
        .capture(Event::tool(
            s,
            "Edit",
            json!({"file_path": "/work/app/src/auth/session.ts", "old_string": "60", "new_string": "3600"}),
            json!({"success": true}),
        ))
        .await
        .unwrap();
    // Nothing is due before the turn ends.
    assert_eq!(cairn.generate().await.unwrap().completed, 0);
    let stop = Event::stop(
        s,
        "SESSION_TTL was in minutes, not seconds; fixed in src/auth/session.ts.",
    );
    let (captured, generated) = cairn
        .capture_and_generate(stop.clone().idempotency_key("stop-1"))
        .await
        .unwrap();
    assert!(captured.created);
    assert_eq!((generated.completed, generated.failed), (2, 0), "{generated:?}");
    // A retry with the same key stores nothing twice.
    let again = cairn.capture(stop.idempotency_key("stop-1")).await.unwrap();
    assert_eq!((again.created, again.event_id), (false, captured.event_id));
    cairn.end_session(s).await.unwrap();
    assert_eq!(
        cairn.generate().await.unwrap().completed,
        1,
        "the session's summary"
    );

    let pool = &cairn.engine().pool;
    let moves: Vec<(Option<String>, String)> = sqlx::query_as(
        "SELECT from_status, to_status FROM generation_job_events WHERE project_id = $1 ORDER BY id",
    )
    .bind(project.id)
    .fetch_all(pool)
    .await
    .unwrap();
    let completed = moves.iter().filter(|(_, to)| to == "completed").count();
    assert_eq!(completed, 3);
    for (from, to) in &moves {
        if to == "completed" {
            assert_eq!(
                from.as_deref(),
                Some("processing"),
                "never queued → completed: {moves:?}"
            );
        }
    }
    let hits = cairn.search("session ttl minutes", 5).await.unwrap();
    assert!(
        hits.iter()
            .any(|h| matches!(h, Hit::Observation { row, .. } if row.title.contains("SESSION_TTL"))),
        "{hits:?}"
    );
    let context = cairn.context(None).await.unwrap();
    assert!(context.contains("SESSION_TTL was in minutes"), "{context}");
    // Bad input is a 4xx with a code; what was stored stays.
    let err = cairn
        .capture(Event::hook("claude-code", json!({"hook_event_name": "Stop"})).unwrap())
        .await
        .unwrap_err();
    assert_eq!((err.status.as_u16(), err.code), (422, "missing_field"));
    assert_eq!(Event::hook("vim", json!({})).unwrap_err().code, "unknown_agent");
}

/// The rows a session left, without ids and times.
async fn rows(pool: &PgPool, project: uuid::Uuid) -> Value {
    let sessions: Vec<Value> = sqlx::query_scalar(
        "SELECT jsonb_build_object('agent', agent, 'external', external_session_id, 'turns', prompt_counter,
                'status', status, 'cwd', cwd)
         FROM sessions WHERE project_id = $1 ORDER BY external_session_id",
    )
    .bind(project)
    .fetch_all(pool)
    .await
    .unwrap();
    let events: Vec<Value> = sqlx::query_scalar(
        "SELECT jsonb_build_object('type', e.event_type, 'tool', e.tool_name, 'turn', e.prompt_number,
                'adapter', e.source_adapter, 'payload', e.payload, 'job', j.job_type)
         FROM agent_events e LEFT JOIN generation_jobs j ON j.id = e.job_id
         WHERE e.project_id = $1 ORDER BY e.occurred_at, e.id",
    )
    .bind(project)
    .fetch_all(pool)
    .await
    .unwrap();
    let jobs: Vec<Value> = sqlx::query_scalar(
        "SELECT jsonb_build_object('type', job_type, 'turn', prompt_number, 'sealed', sealed, 'status', status,
                'events', event_count)
         FROM generation_jobs WHERE project_id = $1 ORDER BY job_type, prompt_number",
    )
    .bind(project)
    .fetch_all(pool)
    .await
    .unwrap();
    json!({"sessions": sessions, "events": events, "jobs": jobs})
}

#[tokio::test]
async fn the_embedded_path_writes_the_same_rows_as_the_servers_hook_route() {
    let bodies = [
        cc("same-1", "SessionStart", json!({"source": "startup"})),
        cc(
            "same-1",
            "UserPromptSubmit",
            json!({"prompt": "fix the flaky login test"}),
        ),
        cc(
            "same-1",
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": "t1",
            "tool_input": {"file_path": "/home/dev/app/tests/login.rs"}, "tool_response": {"content": "fn t() {}"}}),
        ),
        cc(
            "same-1",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "t2",
            "tool_input": {"command": "cargo test login"}, "tool_response": {"stdout": "ok", "password": "hunter2"}}),
        ),
        cc(
            "same-1",
            "Stop",
            json!({"last_assistant_message": "The test raced the clock; it now waits on the page."}),
        ),
        cc("same-1", "SessionEnd", json!({"reason": "exit"})),
    ];
    let app = spawn_app().await;
    for body in &bodies {
        let (status, answer) = app.hook(body.clone()).await;
        assert_eq!(status, 200, "{answer}");
    }
    let url = fresh_database().await;
    let data = tempfile::tempdir().unwrap();
    let cairn = open(&url, data.path()).await;
    for body in &bodies {
        cairn
            .capture(Event::hook("claude-code", body.clone()).unwrap())
            .await
            .unwrap();
    }
    let server = rows(&app.pool, app.project_id).await;
    let embedded = rows(&cairn.engine().pool, cairn.project().id).await;
    assert_eq!(server["events"].as_array().unwrap().len(), 6);
    assert!(
        !server.to_string().contains("hunter2"),
        "the privacy filter ran: {server}"
    );
    assert_eq!(embedded, server);
}

#[tokio::test]
async fn on_a_shared_database_the_embedded_engine_indexes_only_its_own_project() {
    let url = fresh_database().await;
    let data = tempfile::tempdir().unwrap();
    let cairn = open(&url, data.path()).await;
    // Another team's project in the same database, with a memory.
    let other = cairn_core::client::tenant::ensure(&cairn.engine().pool, "other-team", "secret-project")
        .await
        .unwrap();
    let theirs = cairn.for_project(other);
    theirs
        .capture(Event::prompt("o-1", "rotate the payroll signing key"))
        .await
        .unwrap();
    theirs
        .capture(Event::stop("o-1", "The payroll signing key was rotated."))
        .await
        .unwrap();
    theirs.generate().await.unwrap();
    drop(theirs);

    cairn
        .capture(Event::prompt("m-1", "why is the build slow"))
        .await
        .unwrap();
    cairn
        .capture(Event::stop(
            "m-1",
            "The build was slow because of an uncached dependency.",
        ))
        .await
        .unwrap();
    cairn.generate().await.unwrap();
    let hits = cairn.search("payroll signing key", 10).await.unwrap();
    assert!(hits.is_empty(), "another project's memory was found: {hits:?}");
    assert!(!cairn.search("build slow", 5).await.unwrap().is_empty());
    let stats = cairn.engine().retrieval.stats();
    assert_eq!(
        stats.projects, 1,
        "only the client's project is indexed: {stats:?}"
    );
}
