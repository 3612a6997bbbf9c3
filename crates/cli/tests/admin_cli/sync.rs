//! `cairn sync` against a real API: the project's live memories (no stale
//! one, nothing of another project) go into a marked section of CLAUDE.md,
//! the rest of the file stays byte-identical, a second run changes nothing
//! (not even the file's modification time), `--check` notices a stale
//! section, and `--remove` restores the file.

use cairn_testkit::{TestApp, spawn_app};
use uuid::Uuid;

use crate::support::admin;

async fn remember(app: &TestApp, project_id: Uuid, kind: &str, title: &str, state: &str) {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, facts, state)
         SELECT $1, team_id, id, 'test:' || $1, $2, $3, ARRAY[$3 || ' (fact)'], $4 FROM projects WHERE id = $5",
    )
    .bind(id)
    .bind(kind)
    .bind(title)
    .bind(state)
    .bind(project_id)
    .execute(&app.pool)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_writes_live_memories_into_a_marked_section_and_removes_it_exactly() {
    let app = spawn_app().await;
    let other = admin(&app, &["projects", "create", "other", "--json"]).await;
    assert!(other.ok, "{}", other.stderr);
    let other_id: Uuid = other.json()["project"]["id"].as_str().unwrap().parse().unwrap();
    remember(&app, app.project_id, "decision", "Use sqlx, not diesel", "live").await;
    remember(
        &app,
        app.project_id,
        "bugfix",
        "Parser panicked on empty input",
        "live",
    )
    .await;
    remember(&app, app.project_id, "discovery", "Old lexer layout", "stale").await;
    remember(&app, other_id, "decision", "Other team secret", "live").await;

    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("CLAUDE.md");
    let original = "# App\r\n\r\nRun `make test` before pushing.\r\n";
    std::fs::write(&claude, original).unwrap();
    let project = app.project_id.to_string();
    let sync = |extra: &'static [&'static str]| {
        let mut args = vec![
            "sync",
            "--project",
            project.as_str(),
            "--dir",
            dir.path().to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run_sync = |args: Vec<String>| {
        let app = &app;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            admin(app, &args).await
        }
    };

    let run = run_sync(sync(&[])).await;
    assert!(run.ok, "{}", run.stderr);
    let written = std::fs::read_to_string(&claude).unwrap();
    assert!(
        written.starts_with(original),
        "the rest is byte-identical: {written:?}"
    );
    assert!(
        written.contains("<!-- cairn:begin -->\r\n## Project memory (Cairn)"),
        "{written:?}"
    );
    let decision = written.find("Use sqlx, not diesel").expect("the decision");
    let bugfix = written
        .find("Parser panicked on empty input")
        .expect("the bug fix");
    assert!(decision < bugfix, "decisions first: {written}");
    assert!(
        !written.contains("Old lexer layout"),
        "no stale memory: {written}"
    );
    assert!(
        !written.contains("Other team secret"),
        "no other project's memory: {written}"
    );

    // A second run changes nothing, not even the modification time.
    let before = std::fs::metadata(&claude).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let run = run_sync(sync(&[])).await;
    assert!(run.ok && run.stdout.contains("up to date"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), written);
    assert_eq!(std::fs::metadata(&claude).unwrap().modified().unwrap(), before);
    assert!(run_sync(sync(&["--check"])).await.ok);

    // New memory: --check fails until the next sync.
    remember(&app, app.project_id, "decision", "Cap spool at 64 MB", "live").await;
    assert!(!run_sync(sync(&["--check"])).await.ok);
    assert!(run_sync(sync(&["--lines", "6"])).await.ok);
    let capped = std::fs::read_to_string(&claude).unwrap();
    let section_lines = capped[original.len()..].lines().filter(|l| !l.is_empty()).count();
    assert!(section_lines <= 6, "the line budget holds: {capped}");

    // Removing restores the file exactly.
    assert!(run_sync(sync(&["--remove"])).await.ok);
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), original);

    // A Cursor rule the sync creates is deleted again on removal.
    let rule = dir.path().join(".cursor/rules/cairn.mdc");
    assert!(run_sync(sync(&["--target", "cursor"])).await.ok);
    let text = std::fs::read_to_string(&rule).unwrap();
    assert!(
        text.starts_with("---\ndescription: Project memory from Cairn\nalwaysApply: true\n---\n"),
        "{text}"
    );
    assert!(run_sync(sync(&["--target", "cursor", "--remove"])).await.ok);
    assert!(!rule.exists());
}
