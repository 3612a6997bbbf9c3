//! `cairn import claude-mem`: a SQLite file made with claude-mem's own schema
//! (fixtures/claude_mem_schema.sql, copied from its SessionStore.ts) and a
//! few rows as claude-mem writes them; they arrive as sessions,
//! observations and summaries, are searchable, and a second run adds nothing.

use cairn_testkit::spawn_app;
use serde_json::json;

use crate::support::admin;

const SCHEMA: &str = include_str!("../fixtures/claude_mem_schema.sql");

fn claude_mem_db(path: &std::path::Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(SCHEMA).unwrap();
    // Rows of a session claude-mem no longer has (older databases, written
    // before its foreign keys were enforced) are part of the test.
    db.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    db.execute_batch(
        r#"
        INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, platform_source, user_prompt,
                                  started_at, started_at_epoch, completed_at, completed_at_epoch, status, prompt_counter)
        VALUES ('cc-session-1', 'mem-1', 'web', 'claude', 'fix the login flake',
                '2026-05-01T10:00:00Z', 1777629600000, '2026-05-01T10:30:00Z', 1777631400000, 'completed', 2),
               ('cc-session-2', 'mem-2', 'web', 'claude', 'add caching',
                '2026-05-02T09:00:00Z', 1777712400000, NULL, NULL, 'active', 1),
               ('cc-session-3', 'mem-3', 'other', 'claude', 'unrelated',
                '2026-05-03T09:00:00Z', 1777798800000, NULL, NULL, 'active', 1);

        INSERT INTO observations (memory_session_id, project, text, type, title, subtitle, facts, narrative, concepts,
                                  files_read, files_modified, prompt_number, discovery_tokens, created_at,
                                  created_at_epoch, content_hash, generated_by_model)
        VALUES ('mem-1', 'web', NULL, 'bugfix', 'Login flake came from the pangolin clock', 'Clock skew in tests',
                '["The token clock was real time","Tests now pin it"]', 'The login test read the wall clock.',
                '["gotcha","problem-solution"]', '["src/auth/clock.rs"]', '["tests/login.rs"]', 1, 1200,
                '2026-05-01T10:10:00Z', 1777630200000, 'abc123', 'claude-sonnet'),
               ('mem-2', 'web', 'Legacy text body about the cache', 'feature', NULL, NULL, NULL, NULL, NULL,
                NULL, NULL, 1, 0, '2026-05-02T09:10:00Z', 1777713000000, 'def456', NULL),
               ('mem-gone', 'web', NULL, 'discovery', 'Observation of a session claude-mem lost', NULL,
                '[]', 'Still memory.', '[]', '[]', '[]', NULL, 0, '2026-05-02T09:20:00Z', 1777713600000, 'ghi789', NULL),
               ('mem-3', 'other', NULL, 'discovery', 'Other project', NULL, '[]', '', '[]', '[]', '[]', 1, 0,
                '2026-05-03T09:10:00Z', 1777799400000, 'jkl012', NULL);

        INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned, completed,
                                       next_steps, files_read, files_edited, notes, prompt_number, created_at,
                                       created_at_epoch)
        VALUES ('mem-1', 'web', 'Fix the login flake', 'The auth clock', 'Tests must pin the clock',
                'Pinned it', 'Watch CI', '["src/auth/clock.rs"]', '["tests/login.rs"]', NULL, 1,
                '2026-05-01T10:20:00Z', 1777630800000),
               ('mem-gone', 'web', 'Orphan', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1,
                '2026-05-02T09:30:00Z', 1777714200000);

        INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, prompt_text, created_at, created_at_epoch)
        VALUES (1, 'cc-session-1', 1, 'fix the login flake', '2026-05-01T10:00:00Z', 1777629600000);
        "#,
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_mem_history_arrives_searchable_and_a_second_run_adds_nothing() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude-mem.db");
    claude_mem_db(&file);
    let file = file.to_str().unwrap();

    let args = [
        "import",
        "claude-mem",
        file,
        "--project",
        "default",
        "--only-project",
        "web",
        "--json",
    ];
    let run = admin(&app, &args).await;
    assert!(run.ok, "{}", run.stderr);
    let totals = run.json();
    assert_eq!(
        totals["imported"],
        json!({"sessions": 2, "observations": 3, "summaries": 1})
    );
    assert!(run.stderr.contains("left out 1 summary"), "{}", run.stderr);

    // Sessions keyed by the agent's session id, so live hooks of the same session meet them.
    let sessions = app
        .count(
            "SELECT count(*) FROM sessions WHERE agent = 'claude-code'
               AND external_session_id IN ('cc-session-1', 'cc-session-2')",
        )
        .await;
    assert_eq!(sessions, 2);
    let ended = app
        .count(
            "SELECT count(*) FROM sessions WHERE external_session_id = 'cc-session-1' AND status = 'ended'",
        )
        .await;
    assert_eq!(ended, 1);
    // The observation lists arrive as lists, attached to their session.
    let mapped = app
        .count(
            "SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id
              WHERE s.external_session_id = 'cc-session-1' AND o.kind = 'bugfix'
                AND o.facts = ARRAY['The token clock was real time', 'Tests now pin it']
                AND o.concepts = ARRAY['gotcha', 'problem-solution']
                AND o.files_modified = ARRAY['tests/login.rs'] AND o.model = 'claude-sonnet'
                AND o.created_at = to_timestamp(1777630200)",
        )
        .await;
    assert_eq!(mapped, 1);
    let legacy = app
        .count("SELECT count(*) FROM observations WHERE title = 'Legacy text body about the cache'")
        .await;
    assert_eq!(legacy, 1, "a row with only `text` takes its first line as title");
    let unattached = app
        .count("SELECT count(*) FROM observations WHERE session_id IS NULL")
        .await;
    assert_eq!(unattached, 1);
    let summary = app
        .count(
            "SELECT count(*) FROM summaries m JOIN sessions s ON s.id = m.session_id
              WHERE s.external_session_id = 'cc-session-1' AND m.scope = 'turn'
                AND m.learned = 'Tests must pin the clock' AND m.notes LIKE '%Files edited: tests/login.rs%'",
        )
        .await;
    assert_eq!(summary, 1);

    let (status, found) = app
        .post(
            "/v1/search",
            Some(&app.admin_token),
            &json!({"projectId": "default", "query": "pangolin", "limit": 5}),
        )
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["observations"].as_array().unwrap().len(), 1, "{found}");

    let run = admin(&app, &args).await;
    assert!(run.ok, "{}", run.stderr);
    let totals = run.json();
    assert_eq!(
        totals["imported"],
        json!({"sessions": 0, "observations": 0, "summaries": 0})
    );
    assert_eq!(
        totals["existing"],
        json!({"sessions": 2, "observations": 3, "summaries": 1})
    );
    let all = app
        .count("SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)")
        .await;
    assert_eq!(all, 6);

    // Not a claude-mem file: a clear error.
    let not_db = dir.path().join("empty.db");
    rusqlite::Connection::open(&not_db)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let run = admin(
        &app,
        &[
            "import",
            "claude-mem",
            not_db.to_str().unwrap(),
            "--project",
            "default",
        ],
    )
    .await;
    assert!(!run.ok);
    assert!(run.stderr.contains("not a claude-mem database"), "{}", run.stderr);
}
