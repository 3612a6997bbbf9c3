//! Memory upkeep: near-duplicates are merged into the newest of them, which
//! cites every source; memories that only look alike (other files, another
//! kind, another meaning, another project) are not; a second pass changes
//! nothing. Past a project's retention policy, memories nobody retrieved
//! are archived, and only those. A replay that repeats one discovery in two
//! sessions ends with one live memory of it. The generator's sweeper runs
//! upkeep every `CAIRN_UPKEEP_MS`, and not before the first interval.

use std::time::Duration;

use cairn_generator::upkeep;
use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::{Value, json};
use uuid::Uuid;

use super::support::{MINUTE, start, wait_count};

struct Memory<'a> {
    kind: &'a str,
    title: &'a str,
    read: &'a [&'a str],
    modified: &'a [&'a str],
    days_ago: i32,
}

impl Default for Memory<'_> {
    fn default() -> Self {
        Memory {
            kind: "discovery",
            title: "",
            read: &[],
            modified: &[],
            days_ago: 1,
        }
    }
}

async fn remember(app: &TestApp, project_id: Uuid, m: Memory<'_>) -> Uuid {
    let id = Uuid::now_v7();
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, files_read, files_modified,
             created_at)
         SELECT $1, team_id, id, 'test:' || $1, $2, $3, $4, $5, now() - $7 * interval '1 day' - interval '1 minute'
         FROM projects WHERE id = $6",
    )
    .bind(id)
    .bind(m.kind)
    .bind(m.title)
    .bind(list(m.read))
    .bind(list(m.modified))
    .bind(project_id)
    .bind(m.days_ago)
    .execute(&app.pool)
    .await
    .unwrap();
    // Created in order: the later the call, the newer, within the same day.
    tokio::time::sleep(Duration::from_millis(2)).await;
    id
}

async fn state(app: &TestApp, id: Uuid) -> (String, Option<Uuid>, Value) {
    sqlx::query_as("SELECT state, replaced_by, metadata FROM observations WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn near_duplicates_are_merged_into_the_newest_which_cites_them() {
    let app = spawn_app().await;
    let p = app.project_id;
    let lexer = &["src/lexer.rs", "src/token.rs"][..];
    let first = remember(
        &app,
        p,
        Memory {
            title: "Lexer drops trailing comments",
            read: lexer,
            days_ago: 3,
            ..Default::default()
        },
    )
    .await;
    // The same words, inflected and reordered; the same files in another order and list.
    let second = remember(
        &app,
        p,
        Memory {
            title: "Trailing comment dropped by the lexer",
            read: &["src/token.rs"],
            modified: &["src/lexer.rs"],
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let kept = remember(
        &app,
        p,
        Memory {
            title: "lexer drops trailing comments",
            read: lexer,
            days_ago: 1,
            ..Default::default()
        },
    )
    .await;
    // Alike but not the same: other files, another kind, other words, no files, another project.
    let other_files = remember(
        &app,
        p,
        Memory {
            title: "Lexer drops trailing comments",
            read: &["src/lexer.rs"],
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let other_kind = remember(
        &app,
        p,
        Memory {
            kind: "bugfix",
            title: "Lexer drops trailing comments",
            read: lexer,
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let other_words = remember(
        &app,
        p,
        Memory {
            title: "Lexer keeps spans for error messages",
            read: lexer,
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let no_files = remember(
        &app,
        p,
        Memory {
            title: "Build needs clang",
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let no_files_again = remember(
        &app,
        p,
        Memory {
            title: "Build needs clang",
            days_ago: 1,
            ..Default::default()
        },
    )
    .await;
    let elsewhere = app.create_project("other").await;
    let foreign = remember(
        &app,
        elsewhere,
        Memory {
            title: "Lexer drops trailing comments",
            read: lexer,
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;

    let pass = upkeep::run(&app.pool, "test", 5).await.unwrap();
    assert_eq!(pass.merged, 2, "{pass:?}");
    assert!(pass.checked >= 9, "{pass:?}");
    for merged in [first, second] {
        let (s, by, _) = state(&app, merged).await;
        assert_eq!((s.as_str(), by), ("merged", Some(kept)), "{merged}");
    }
    let (s, _, meta) = state(&app, kept).await;
    assert_eq!(s, "live");
    let mut cited: Vec<Uuid> = serde_json::from_value(meta["merged_from"].clone()).unwrap();
    cited.sort();
    let mut sources = vec![first, second];
    sources.sort();
    assert_eq!(cited, sources, "the kept memory cites both sources");
    for untouched in [
        other_files,
        other_kind,
        other_words,
        no_files,
        no_files_again,
        foreign,
    ] {
        assert_eq!(state(&app, untouched).await.0, "live", "{untouched}");
    }
    let changes: Vec<(Uuid, String, String, String, Option<Uuid>)> = sqlx::query_as(
        "SELECT observation_id, action, from_state, to_state, related_id FROM memory_changes ORDER BY observation_id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        changes,
        vec![
            (first, "merge".into(), "live".into(), "merged".into(), Some(kept)),
            (second, "merge".into(), "live".into(), "merged".into(), Some(kept)),
        ]
    );

    // Idempotent: everything was compared; a second pass changes nothing.
    let again = upkeep::run(&app.pool, "test", 5).await.unwrap();
    assert_eq!(again, upkeep::Pass::default());
}

#[tokio::test]
async fn alike_titles_with_distant_meanings_are_not_merged() {
    let app = spawn_app().await;
    let p = app.project_id;
    let files = &["src/cache.rs"][..];
    let a = remember(
        &app,
        p,
        Memory {
            title: "Cache evicts on write",
            read: files,
            days_ago: 2,
            ..Default::default()
        },
    )
    .await;
    let b = remember(
        &app,
        p,
        Memory {
            title: "Cache evicts on write",
            read: files,
            days_ago: 1,
            ..Default::default()
        },
    )
    .await;
    let c = remember(
        &app,
        p,
        Memory {
            title: "Cache evicts on write",
            read: files,
            days_ago: 0,
            ..Default::default()
        },
    )
    .await;
    // a and c point the same way; b is orthogonal to both.
    for (id, v) in [
        (a, [1.0f32, 0.0, 0.0]),
        (b, [0.0, 1.0, 0.0]),
        (c, [0.9, 0.1, 0.0]),
    ] {
        sqlx::query(
            "INSERT INTO observation_embeddings (observation_id, project_id, model, dims, embedding)
             VALUES ($1, $2, 'm', 3, $3)",
        )
        .bind(id)
        .bind(p)
        .bind(v.to_vec())
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let pass = upkeep::run(&app.pool, "test", 5).await.unwrap();
    assert_eq!(pass.merged, 1, "{pass:?}");
    assert_eq!(state(&app, a).await.0, "merged");
    assert_eq!(state(&app, a).await.1, Some(c));
    assert_eq!(
        state(&app, b).await.0,
        "live",
        "an orthogonal meaning stays apart"
    );
    assert_eq!(state(&app, c).await.0, "live");
}

#[tokio::test]
async fn retention_archives_old_memories_nobody_retrieved_and_only_those() {
    let app = spawn_app().await;
    let p = app.project_id;
    let (status, res) = app
        .patch(
            &format!("/v1/admin/projects/{p}"),
            Some(&app.admin_token),
            &json!({ "retentionDays": 30 }),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(res["project"]["retentionDays"], 30, "{res}");
    let old = remember(
        &app,
        p,
        Memory {
            title: "old and unused",
            read: &["a.rs"],
            days_ago: 60,
            ..Default::default()
        },
    )
    .await;
    let old_stale = remember(
        &app,
        p,
        Memory {
            title: "old, stale",
            read: &["b.rs"],
            days_ago: 45,
            ..Default::default()
        },
    )
    .await;
    sqlx::query("UPDATE observations SET state = 'stale' WHERE id = $1")
        .bind(old_stale)
        .execute(&app.pool)
        .await
        .unwrap();
    let old_used = remember(
        &app,
        p,
        Memory {
            title: "old but used",
            read: &["c.rs"],
            days_ago: 60,
            ..Default::default()
        },
    )
    .await;
    sqlx::query(
        "INSERT INTO memory_retrievals (observation_id, project_id, retrieved_count, last_retrieved_at)
         VALUES ($1, $2, 3, now() - interval '5 days')",
    )
    .bind(old_used)
    .bind(p)
    .execute(&app.pool)
    .await
    .unwrap();
    let recent = remember(
        &app,
        p,
        Memory {
            title: "recent",
            read: &["d.rs"],
            days_ago: 10,
            ..Default::default()
        },
    )
    .await;
    // No retention policy: kept for ever.
    let elsewhere = app.create_project("other").await;
    let forever = remember(
        &app,
        elsewhere,
        Memory {
            title: "ancient",
            read: &["a.rs"],
            days_ago: 900,
            ..Default::default()
        },
    )
    .await;

    let pass = upkeep::run(&app.pool, "test", 5).await.unwrap();
    assert_eq!(pass.archived, 2, "{pass:?}");
    assert_eq!(state(&app, old).await.0, "archived");
    assert_eq!(state(&app, old_stale).await.0, "archived");
    for kept in [old_used, recent, forever] {
        assert_eq!(state(&app, kept).await.0, "live", "{kept}");
    }
    let logged: Vec<(Uuid, String, String)> = sqlx::query_as(
        "SELECT observation_id, from_state, reason FROM memory_changes WHERE action = 'archive' ORDER BY observation_id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(logged.len(), 2);
    assert_eq!((logged[0].0, logged[0].1.as_str()), (old, "live"));
    assert_eq!((logged[1].0, logged[1].1.as_str()), (old_stale, "stale"));
    assert!(logged[0].2.contains("30 days"), "{}", logged[0].2);
    assert_eq!(upkeep::run(&app.pool, "test", 5).await.unwrap().archived, 0);
}

/// One turn that reads a file and runs a failing build, as Claude Code reports them.
async fn same_discovery(app: &TestApp, session: &str) {
    let tool = |name: &str, input: Value, response: Value| {
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": name, "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": input, "tool_response": response }),
        )
    };
    for body in [
        cc(session, "SessionStart", json!({ "source": "startup" })),
        cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": "why does the build fail?" }),
        ),
        tool(
            "Read",
            json!({ "file_path": "/repo/build.rs" }),
            json!({ "file": { "filePath": "/repo/build.rs", "content": "fn main() { cc::Build::new().compile(\"x\"); }" } }),
        ),
        tool(
            "Bash",
            json!({ "command": "cargo build" }),
            json!({ "stdout": "", "stderr": "error: failed to run custom build command for `x`\nerror occurred: Failed to find tool. Is `clang` installed?", "exit_code": 101 }),
        ),
        cc(
            session,
            "Stop",
            json!({ "last_assistant_message": "The build script needs clang; install it." }),
        ),
        cc(session, "SessionEnd", json!({ "reason": "exit" })),
    ] {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
}

#[tokio::test]
async fn a_replay_that_repeats_a_discovery_keeps_one_live_memory_of_it() {
    let app = spawn_app().await;
    // The generator's own upkeep is not due for ten minutes, though its
    // sweeper first runs within 2.4-3.6 s: this test's pass is the only one.
    let started = std::time::Instant::now();
    let generator = start(&app, &[("CAIRN_UPKEEP_MS", "600000"), ("CAIRN_SWEEP_MS", "3000")]);
    // A session's summary may be written before its last turn's
    // observation job ends: wait for both.
    let observations_done =
        "SELECT count(*) FROM generation_jobs WHERE status = 'completed' AND job_type = 'observations'";
    same_discovery(&app, "s-monday").await;
    wait_count(
        &app.pool,
        "SELECT count(*) FROM summaries WHERE scope = 'session'",
        1,
        MINUTE,
    )
    .await;
    wait_count(&app.pool, observations_done, 1, MINUTE).await;
    same_discovery(&app, "s-tuesday").await;
    wait_count(
        &app.pool,
        "SELECT count(*) FROM summaries WHERE scope = 'session'",
        2,
        MINUTE,
    )
    .await;
    wait_count(&app.pool, observations_done, 2, MINUTE).await;
    // Let the sweeper's first pass come and go: it must not consolidate.
    tokio::time::sleep(Duration::from_secs(4).saturating_sub(started.elapsed())).await;
    generator.stop().await;

    let count = |state: &'static str| {
        let pool = app.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM observations WHERE state = $1")
                .bind(state)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let before = count("live").await;
    assert!(
        before >= 2,
        "each session wrote its memory of the discovery: {before}"
    );
    let pass = upkeep::run(&app.pool, "test", 5).await.unwrap();
    assert!(pass.merged >= 1, "{pass:?}");
    assert_eq!(count("live").await, before - pass.merged);
    // Every merged memory points at a live one that cites it.
    let dangling: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM observations m JOIN observations k ON k.id = m.replaced_by
         WHERE m.state = 'merged' AND NOT (k.state = 'live' AND k.metadata -> 'merged_from' ? m.id::text)",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(dangling, 0);
}

#[tokio::test]
async fn the_generator_consolidates_every_upkeep_interval() {
    let app = spawn_app().await;
    let generator = start(&app, &[("CAIRN_UPKEEP_MS", "500")]);
    same_discovery(&app, "s-monday").await;
    same_discovery(&app, "s-tuesday").await;
    wait_count(
        &app.pool,
        "SELECT count(*) FROM observations WHERE state = 'merged'",
        1,
        MINUTE,
    )
    .await;
    generator.stop().await;
}
