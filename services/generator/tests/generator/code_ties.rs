//! Memory tied to code: when a turn changes a file, the project's older
//! memories about it are re-marked in the completion statement — the one
//! that described the same kind of change to it is superseded by the new
//! observation, the others about it become stale — with a `memory_changes`
//! row each; memories of untouched files (and of other projects) stay live.
//! Observations record the session's HEAD.

use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::json;
use uuid::Uuid;

use super::support::{MINUTE, start, wait_count};

/// An older observation of `project` about `read` / `modified` files.
async fn remember(
    app: &TestApp,
    project_id: Uuid,
    kind: &str,
    title: &str,
    read: &[&str],
    modified: &[&str],
) -> Uuid {
    let id = Uuid::now_v7();
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, files_read, files_modified,
             created_at)
         SELECT $1, team_id, id, 'test:' || $1, $2, $3, $4, $5, now() - interval '1 day' FROM projects WHERE id = $6",
    )
    .bind(id)
    .bind(kind)
    .bind(title)
    .bind(list(read))
    .bind(list(modified))
    .bind(project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn state(app: &TestApp, id: Uuid) -> (String, Option<Uuid>) {
    sqlx::query_as("SELECT state, replaced_by FROM observations WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_rewritten_file_makes_its_old_memories_stale_or_superseded_and_no_others() {
    let app = spawn_app().await;
    let (status, other) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({ "slug": "other" }),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let other_project: Uuid = other["project"]["id"].as_str().unwrap().parse().unwrap();

    let changed = remember(
        &app,
        app.project_id,
        "change",
        "parser takes a slice",
        &[],
        &["src/parser.rs"],
    )
    .await;
    let read = remember(
        &app,
        app.project_id,
        "discovery",
        "parser is recursive descent",
        &["src/parser.rs"],
        &[],
    )
    .await;
    let untouched = remember(
        &app,
        app.project_id,
        "change",
        "lexer keeps spans",
        &[],
        &["src/lexer.rs"],
    )
    .await;
    let foreign = remember(
        &app,
        other_project,
        "change",
        "their parser",
        &[],
        &["src/parser.rs"],
    )
    .await;

    // The session is on a known commit when the turn is generated.
    for body in [
        cc(
            "s-code",
            "UserPromptSubmit",
            json!({ "prompt": "rewrite the parser" }),
        ),
        cc(
            "s-code",
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "/home/dev/app/src/parser.rs",
                                    "old_string": "fn parse(input: &[u8])", "new_string": "fn parse(input: &str)" },
                    "tool_response": { "ok": true } }),
        ),
    ] {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
    sqlx::query("UPDATE sessions SET head_commit = 'a1b2c3d4e5f6' WHERE external_session_id = 's-code'")
        .execute(&app.pool)
        .await
        .unwrap();
    let (status, res) = app
        .hook(cc(
            "s-code",
            "Stop",
            json!({ "last_assistant_message": "Rewrote the parser to take &str." }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");

    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM generation_jobs WHERE status = 'completed' AND job_type = 'observations'",
        1,
        MINUTE,
    )
    .await;
    generator.stop().await;

    let (new_id, commit, modified): (Uuid, Option<String>, Vec<String>) = sqlx::query_as(
        "SELECT id, commit_sha, files_modified FROM observations WHERE job_id IS NOT NULL ORDER BY created_at LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        commit.as_deref(),
        Some("a1b2c3d4e5f6"),
        "drawn from the session's HEAD"
    );
    assert!(
        modified.iter().any(|f| f.ends_with("src/parser.rs")),
        "{modified:?}"
    );

    assert_eq!(state(&app, changed).await, ("superseded".into(), Some(new_id)));
    assert_eq!(state(&app, read).await, ("stale".into(), None));
    assert_eq!(state(&app, untouched).await, ("live".into(), None));
    assert_eq!(state(&app, foreign).await, ("live".into(), None));
    let logged: Vec<(Uuid, String, String)> =
        sqlx::query_as("SELECT observation_id, action, to_state FROM memory_changes ORDER BY action")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        logged,
        vec![
            (read, "stale".into(), "stale".into()),
            (changed, "supersede".into(), "superseded".into())
        ],
    );
}

#[tokio::test]
async fn a_members_private_edit_stales_the_teams_memory_but_never_supersedes_it() {
    let app = spawn_app().await;
    app.private_first().await;
    let team = remember(
        &app,
        app.project_id,
        "change",
        "parser takes a slice",
        &[],
        &["src/parser.rs"],
    )
    .await;
    let (_, alice) = app.member_token("alice@acme.test").await;
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    for body in [
        cc(
            "s-alice",
            "UserPromptSubmit",
            json!({ "prompt": "rewrite the parser" }),
        ),
        cc(
            "s-alice",
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "/home/dev/app/src/parser.rs",
                                    "old_string": "fn parse(input: &[u8])", "new_string": "fn parse(input: &str)" },
                    "tool_response": { "ok": true } }),
        ),
        cc(
            "s-alice",
            "Stop",
            json!({ "last_assistant_message": "Rewrote the parser to take &str." }),
        ),
    ] {
        let (status, res) = app.post(&path, Some(&alice), &body).await;
        assert_eq!(status, 200, "{res}");
    }
    app.generate().await;
    let (kind, visibility): (String, String) =
        sqlx::query_as("SELECT kind, visibility FROM observations WHERE job_id IS NOT NULL LIMIT 1")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        (kind.as_str(), visibility.as_str()),
        ("change", "private"),
        "her edit is a change of the same kind, hers alone"
    );
    // The code did change: the team's memory is stale, and names no
    // replacement the rest of the team cannot read.
    assert_eq!(state(&app, team).await, ("stale".into(), None));
}

/// A hook call with the file's hash, as `cairn hook` sends it after a tool ran.
async fn hook_with_hash(app: &TestApp, body: serde_json::Value, hash: &str) {
    let (status, res) = app.hook_with_hash(body, hash).await;
    assert_eq!(status, 200, "{res}");
}

#[tokio::test]
async fn observations_cite_the_file_version_they_were_drawn_from_and_a_later_version_stales_them() {
    let app = spawn_app().await;
    let v1 = "a".repeat(64);
    let v2 = "b".repeat(64);
    let session = "s-hashes";
    for body in [
        cc(session, "SessionStart", json!({ "source": "startup" })),
        cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": "how does the lexer work" }),
        ),
    ] {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
    let read = |session: &str| {
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "/home/dev/app/src/lexer.rs" },
                    "tool_response": { "file": { "filePath": "/home/dev/app/src/lexer.rs",
                                                 "content": "pub fn lex(input: &str) -> Vec<Token> { todo!() }" } } }),
        )
    };
    hook_with_hash(&app, read(session), &v1).await;
    let (status, res) = app
        .hook(cc(
            session,
            "Stop",
            json!({ "last_assistant_message": "The lexer is a hand-written scanner." }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");
    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM observations WHERE 'src/lexer.rs' = ANY(files_read) OR '/home/dev/app/src/lexer.rs' = ANY(files_read)",
        1,
        MINUTE,
    )
    .await;
    generator.stop().await;
    let (id, refs): (Uuid, serde_json::Value) = sqlx::query_as(
        "SELECT id, file_refs FROM observations WHERE cardinality(files_read) > 0 ORDER BY created_at LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(refs, json!([{ "path": "src/lexer.rs", "hash": v1 }]));

    // The same version read again in another session: still live.
    hook_with_hash(&app, read("s-later"), &v1).await;
    assert_eq!(state(&app, id).await.0, "live");
    // The file changed outside the agent (a pull): the next Read finds v2.
    hook_with_hash(&app, read("s-later"), &v2).await;
    assert_eq!(state(&app, id).await.0, "stale");
}

fn sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// One turn of `session` — a prompt, `tool` events (each sent with its
/// file's hash), a Stop — generated to completion.
async fn generated_turn(app: &TestApp, session: &str, tools: &[(serde_json::Value, String)], completed: i64) {
    let (status, res) = app
        .hook(cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": "work on the parser" }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");
    for (event, hash) in tools {
        hook_with_hash(app, cc(session, "PostToolUse", event.clone()), hash).await;
    }
    let (status, res) = app
        .hook(cc(
            session,
            "Stop",
            json!({ "last_assistant_message": "Done with the parser." }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");
    let generator = start(app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM generation_jobs WHERE status = 'completed' AND job_type = 'observations'",
        completed,
        MINUTE,
    )
    .await;
    generator.stop().await;
}

fn edit(original: &str, old_start: i64, old_lines: i64, new_lines: i64) -> serde_json::Value {
    json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
            "tool_input": { "file_path": "/home/dev/app/src/parser.rs", "old_string": "a", "new_string": "b" },
            "tool_response": { "filePath": "/home/dev/app/src/parser.rs", "originalFile": original,
                               "structuredPatch": [{ "oldStart": old_start, "oldLines": old_lines,
                                                     "newStart": old_start, "newLines": new_lines, "lines": [] }] } })
}

/// Line spans: a memory of lines 40-60 of a file outlives an edit of lines
/// 5-6 (tied to the new version, its lines moved down by the three the edit
/// added), while a memory of the whole file goes stale; an edit of its own
/// lines then stales it too.
#[tokio::test]
async fn an_edit_elsewhere_in_a_file_keeps_a_memory_of_other_lines() {
    let app = spawn_app().await;
    let (v1, v2, v3) = ("fn one() {}\n", "fn two() {}\n", "fn three() {}\n");
    let read = json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
                       "tool_input": { "file_path": "/home/dev/app/src/parser.rs", "offset": 40, "limit": 21 },
                       "tool_response": { "type": "text", "file": { "filePath": "/home/dev/app/src/parser.rs",
                           "content": "fn parse_expr() {}", "startLine": 40, "numLines": 21, "totalLines": 300 } } });
    generated_turn(&app, "s-spans-1", &[(read, sha256(v1))], 1).await;
    let (id, refs): (Uuid, serde_json::Value) =
        sqlx::query_as("SELECT id, file_refs FROM observations WHERE job_id IS NOT NULL")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        refs,
        json!([{ "path": "src/parser.rs", "hash": sha256(v1), "lines": [[40, 60]] }])
    );
    let whole = remember(
        &app,
        app.project_id,
        "discovery",
        "parser layout",
        &["src/parser.rs"],
        &[],
    )
    .await;
    sqlx::query("UPDATE observations SET file_refs = $2 WHERE id = $1")
        .bind(whole)
        .bind(json!([{ "path": "src/parser.rs", "hash": sha256(v1) }]))
        .execute(&app.pool)
        .await
        .unwrap();

    // Another session edits lines 5-6 of that version into five lines.
    generated_turn(&app, "s-spans-2", &[(edit(v1, 5, 2, 5), sha256(v2))], 2).await;
    assert_eq!(state(&app, id).await, ("live".into(), None));
    let refs: serde_json::Value = sqlx::query_scalar("SELECT file_refs FROM observations WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        refs,
        json!([{ "path": "src/parser.rs", "hash": sha256(v2), "lines": [[43, 63]] }])
    );
    assert_eq!(
        state(&app, whole).await.0,
        "stale",
        "no lines: about all of the file"
    );
    // Re-tied to the new version, a Read of it elsewhere keeps it live.
    let reread = json!({ "tool_name": "Read", "tool_use_id": Uuid::new_v4().to_string(),
                         "tool_input": { "file_path": "/home/dev/app/src/parser.rs" },
                         "tool_response": { "file": { "filePath": "/home/dev/app/src/parser.rs", "content": "x" } } });
    hook_with_hash(&app, cc("s-spans-reader", "PostToolUse", reread), &sha256(v2)).await;
    assert_eq!(state(&app, id).await.0, "live");

    // An edit of lines 50-52 of the new version touches it.
    generated_turn(&app, "s-spans-3", &[(edit(v2, 50, 3, 1), sha256(v3))], 3).await;
    assert_eq!(state(&app, id).await.0, "stale");
}
