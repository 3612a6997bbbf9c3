//! The memory lifecycle has one owner: no statement outside
//! `crates/core/src/memory/lifecycle/` writes an observation's state or a
//! `memory_changes` row, the schema's guard allows exactly the moves
//! `TRANSITIONS` lists, and `docs/memory-lifecycle.md` draws them.

use std::path::{Path, PathBuf};

use cairn_core::memory::lifecycle::{self, MemoryState};
use regex::Regex;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The state writes in `text`: an `UPDATE observations … SET` whose list
/// assigns `state`, or an insert into `memory_changes`.
fn state_writes(text: &str) -> Vec<String> {
    let update =
        Regex::new(r"(?is)UPDATE\s+observations\b(?:\s+\w+)?\s+SET\b(.*?)(?:\bWHERE\b|\bRETURNING\b|;|$)")
            .unwrap();
    let assigns_state = Regex::new(r"(?i)(?:^|[,\s])(?:\w+\.)?state\s*=").unwrap();
    let insert = Regex::new(r"(?i)INSERT\s+INTO\s+memory_changes\b").unwrap();
    let mut found: Vec<String> = update
        .captures_iter(text)
        .filter(|c| assigns_state.is_match(&c[1]))
        .map(|c| c[0].chars().take(80).collect())
        .collect();
    found.extend(insert.find_iter(text).map(|m| m.as_str().to_string()));
    found
}

#[test]
fn the_scanner_finds_state_writes_and_passes_reads() {
    assert_eq!(
        state_writes("UPDATE observations SET state = 'stale' WHERE id = $1").len(),
        1
    );
    assert_eq!(
        state_writes("UPDATE observations o SET title = $2, state_changed_at = now(),\n state = $3 FROM x WHERE o.id = x.id").len(),
        1
    );
    assert_eq!(
        state_writes("INSERT INTO memory_changes (id) VALUES ($1)").len(),
        1
    );
    assert!(state_writes("UPDATE observations SET state_changed_at = now() WHERE state = 'live'").is_empty());
    assert!(state_writes("SELECT * FROM observations WHERE o.state = 'live'").is_empty());
}

#[test]
fn no_statement_outside_the_lifecycle_writes_a_memory_state() {
    let root = workspace();
    let lifecycle = root.join("crates/core/src/memory/lifecycle");
    let mut files = Vec::new();
    for dir in ["services", "crates"] {
        for member in std::fs::read_dir(root.join(dir)).unwrap() {
            let src = member.unwrap().path().join("src");
            // Benchmarks set states to replay scenarios; tests live outside `src`.
            if src.is_dir() && !src.starts_with(root.join("crates/bench")) {
                rust_files(&src, &mut files);
            }
        }
    }
    assert!(files.len() > 100, "scanned {} files only", files.len());
    let mut inside = 0;
    let mut outside = Vec::new();
    for file in &files {
        let writes = state_writes(&std::fs::read_to_string(file).unwrap());
        if file.starts_with(&lifecycle) {
            inside += writes.len();
        } else {
            outside.extend(writes.into_iter().map(|w| format!("{}: {w}", file.display())));
        }
    }
    assert!(
        outside.is_empty(),
        "memory states written outside the lifecycle:\n{}",
        outside.join("\n")
    );
    // stale on read, the completion's re-marking, merge, archive, revert: a
    // state write and a log insert each.
    assert!(
        inside >= 10,
        "the lifecycle's own statements were not found ({inside})"
    );
}

#[test]
fn the_drawing_in_the_docs_is_the_transition_table() {
    let doc = std::fs::read_to_string(workspace().join("docs/memory-lifecycle.md")).unwrap();
    assert!(
        doc.contains(&lifecycle::drawing()),
        "docs/memory-lifecycle.md does not hold the current drawing:\n{}",
        lifecycle::drawing()
    );
}

#[tokio::test]
async fn the_schema_allows_exactly_the_listed_moves_and_refuses_the_rest() {
    let url = cairn_testkit::fresh_database().await;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    cairn_shared::db::run_migrations(&pool).await.unwrap();
    for from in MemoryState::ALL {
        for to in MemoryState::ALL {
            let allowed: bool = sqlx::query_scalar("SELECT memory_state_move_allowed($1, $2)")
                .bind(from)
                .bind(to)
                .fetch_one(&pool)
                .await
                .unwrap();
            let listed = from == to || lifecycle::action(from, to).is_some();
            assert_eq!(allowed, listed, "{from:?} → {to:?}");
        }
    }
    // The trigger itself, on a real row.
    let team = cairn_shared::tenancy::teams::create_team(&pool, "t", "T")
        .await
        .unwrap()
        .id;
    let project = cairn_shared::tenancy::projects::create_project(&pool, team, "p", "P")
        .await
        .unwrap()
        .id;
    let id = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, origin, kind, title, state)
         VALUES ($1, $2, $3, 'test:' || $1, 'manual', 'discovery', 't', 'merged')",
    )
    .bind(id)
    .bind(team)
    .bind(project)
    .execute(&pool)
    .await
    .unwrap();
    let refused = sqlx::query("UPDATE observations SET state = 'archived' WHERE id = $1")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap_err();
    let code = refused
        .as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.to_string());
    assert_eq!(code.as_deref(), Some("23514"), "{refused}");
    sqlx::query("UPDATE observations SET state = 'live' WHERE id = $1")
        .bind(id)
        .execute(&pool)
        .await
        .expect("merged → live is a restore");
}
