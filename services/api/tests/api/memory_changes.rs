//! What happened to memories, and undoing it: the project's memory changes
//! are listed (of the project only) and an admin reverts one — the
//! observation gets its state back and a merge's kept memory stops citing
//! it; a change reverted twice, or whose observation moved on, is refused
//! with 409. Search ranks stale and superseded memories below live ones and
//! can be asked "as of" a commit; context shows plans under their own heading.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

async fn remember(app: &TestApp, project_id: Uuid, title: &str, state: &str, minutes_ago: i32) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative, state,
             created_at)
         SELECT $1, team_id, id, 'test:' || $1, 'discovery', $3, 'notes', $4, now() - $5 * interval '1 minute'
         FROM projects WHERE id = $2",
    )
    .bind(id)
    .bind(project_id)
    .bind(title)
    .bind(state)
    .bind(minutes_ago)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

/// Merges `merged` into `kept` as the generator's upkeep does; returns the change id.
async fn merge(app: &TestApp, project_id: Uuid, merged: Uuid, kept: Uuid) -> Uuid {
    let change = Uuid::now_v7();
    sqlx::query(
        "WITH m AS (UPDATE observations SET state = 'merged', replaced_by = $3 WHERE id = $2),
              k AS (UPDATE observations SET metadata = jsonb_build_object('merged_from', jsonb_build_array($2::text))
                    WHERE id = $3)
         INSERT INTO memory_changes (id, team_id, project_id, observation_id, action, from_state, to_state,
                                     related_id, reason, actor)
         SELECT $1, team_id, id, $2, 'merge', 'live', 'merged', $3, 'near-duplicate', 'test'
         FROM projects WHERE id = $4",
    )
    .bind(change)
    .bind(merged)
    .bind(kept)
    .bind(project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    change
}

async fn state(app: &TestApp, id: Uuid) -> (String, Option<Uuid>, Value) {
    sqlx::query_as("SELECT state, replaced_by, metadata FROM observations WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_merge_is_listed_and_reverted_once() {
    let app = spawn_app().await;
    let p = app.project_id;
    let older = remember(&app, p, "Lexer drops comments", "live", 10).await;
    let kept = remember(&app, p, "Lexer drops comments", "live", 5).await;
    let change = merge(&app, p, older, kept).await;
    let elsewhere = app.create_project("elsewhere").await;
    let foreign_old = remember(&app, elsewhere, "Other", "live", 10).await;
    let foreign_kept = remember(&app, elsewhere, "Other", "live", 5).await;
    let foreign = merge(&app, elsewhere, foreign_old, foreign_kept).await;

    let (status, listed) = app
        .get(
            &format!("/v1/projects/{p}/memory-changes"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200, "{listed}");
    let changes = listed["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "only this project's changes: {listed}");
    assert_eq!(changes[0]["id"], change.to_string());
    assert_eq!(changes[0]["action"], "merge");
    assert_eq!(changes[0]["relatedId"], kept.to_string());
    let (status, of_kept) = app
        .get(
            &format!("/v1/projects/{p}/memory-changes?observation={kept}"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(status, 200, "{of_kept}");
    assert_eq!(
        of_kept["changes"].as_array().unwrap().len(),
        1,
        "the kept one's history shows the merge"
    );

    // Reading is not enough to revert; another project's change is not found here.
    let revert = |id: Uuid| format!("/v1/projects/{p}/memory-changes/{id}/revert");
    let (status, refused) = app
        .post(&revert(change), Some(&app.ingest_token), &json!({}))
        .await;
    assert_eq!(status, 403, "{refused}");
    let (status, refused) = app
        .post(&revert(foreign), Some(&app.admin_token), &json!({}))
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (404, Some("change_not_found")),
        "{refused}"
    );
    assert_eq!(state(&app, foreign_old).await.0, "merged");

    let (status, restored) = app
        .post(&revert(change), Some(&app.admin_token), &json!({}))
        .await;
    assert_eq!(status, 200, "{restored}");
    assert_eq!(restored["action"], "restore");
    assert_eq!(restored["toState"], "live");
    assert_eq!(restored["relatedId"], change.to_string());
    let (s, by, _) = state(&app, older).await;
    assert_eq!((s.as_str(), by), ("live", None));
    let (_, _, meta) = state(&app, kept).await;
    assert_eq!(
        meta["merged_from"],
        json!([]),
        "the kept memory no longer cites it: {meta}"
    );

    let (status, again) = app
        .post(&revert(change), Some(&app.admin_token), &json!({}))
        .await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (409, Some("not_revertible")),
        "{again}"
    );
    let restore_id: Uuid = restored["id"].as_str().unwrap().parse().unwrap();
    let (status, again) = app
        .post(&revert(restore_id), Some(&app.admin_token), &json!({}))
        .await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (409, Some("not_revertible")),
        "{again}"
    );
}

#[tokio::test]
async fn a_change_whose_memory_moved_on_is_not_reverted() {
    let app = spawn_app().await;
    let p = app.project_id;
    let older = remember(&app, p, "Cache evicts", "live", 10).await;
    let kept = remember(&app, p, "Cache evicts", "live", 5).await;
    let change = merge(&app, p, older, kept).await;
    // Moved on since the merge (a legal move: the schema refuses the rest).
    sqlx::query("UPDATE observations SET state = 'stale' WHERE id = $1")
        .bind(older)
        .execute(&app.pool)
        .await
        .unwrap();
    let (status, refused) = app
        .post(
            &format!("/v1/projects/{p}/memory-changes/{change}/revert"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("state_changed")),
        "{refused}"
    );
    assert_eq!(state(&app, older).await.0, "stale");
    let (status, bad) = app
        .get(
            &format!("/v1/projects/{p}/memory-changes?limit=0"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(
        (status, bad["error"]["code"].as_str()),
        (422, Some("invalid_field")),
        "{bad}"
    );
}

#[tokio::test]
async fn search_ranks_stale_and_superseded_memories_lower() {
    let app = spawn_app().await;
    let p = app.project_id;
    // The same text: without states the newest would rank first.
    let live = remember(&app, p, "tokenizer overflow", "live", 30).await;
    let stale = remember(&app, p, "tokenizer overflow", "stale", 20).await;
    let superseded = remember(&app, p, "tokenizer overflow", "superseded", 10).await;
    let (status, found) = app
        .get(
            "/v1/search?query=tokenizer&mode=fulltext",
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200, "{found}");
    let order: Vec<String> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["observation"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, [live, stale, superseded].map(|id| id.to_string()));
}

#[tokio::test]
async fn search_as_of_a_commit_leaves_out_later_memories() {
    let app = spawn_app().await;
    let p = app.project_id;
    let before = remember(&app, p, "parser recursion", "live", 60).await;
    // The commit, first reported 30 minutes ago; the next one 10 minutes ago.
    let commit = "0123456789abcdef0123456789abcdef01234567";
    sqlx::query(
        "INSERT INTO project_commits (project_id, commit_sha, first_seen_at) VALUES ($1, $2, now() - interval '30 minutes'),
                ($1, '0123456fffffffffffffffffffffffffffffffff', now() - interval '10 minutes')",
    )
    .bind(p)
    .bind(commit)
    .execute(&app.pool)
    .await
    .unwrap();
    let during = remember(&app, p, "parser recursion", "live", 20).await;
    let after = remember(&app, p, "parser recursion", "live", 5).await;

    let ids = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["observation"]["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, now) = app.get("/v1/search?query=parser", Some(&app.ingest_token)).await;
    assert_eq!(status, 200, "{now}");
    assert_eq!(ids(&now).len(), 3);
    let (status, then) = app
        .get(
            &format!("/v1/search?query=parser&commit={}", &commit[..12]),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200, "{then}");
    let mut found = ids(&then);
    found.sort();
    let mut want = vec![before.to_string(), during.to_string()];
    want.sort();
    assert_eq!(
        found, want,
        "written while the commit was the newest, not {after}"
    );
    for (commit, code) in [
        ("0123456", "ambiguous_commit"),
        ("abcdef0", "unknown_commit"),
        ("xyz", "invalid_field"),
    ] {
        let (status, refused) = app
            .get(
                &format!("/v1/search?query=parser&commit={commit}"),
                Some(&app.ingest_token),
            )
            .await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (422, Some(code)),
            "{commit}: {refused}"
        );
    }
}

#[tokio::test]
async fn context_shows_plans_under_their_own_heading() {
    let app = spawn_app().await;
    let p = app.project_id;
    remember(&app, p, "Tokenizer keeps spans", "live", 20).await;
    let plan = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative)
         VALUES ($1, $2, $3, 'test:' || $1, 'plan', 'Plan: move the lexer to spans', '1. tokens carry spans')",
    )
    .bind(plan)
    .bind(app.team_id)
    .bind(p)
    .execute(&app.pool)
    .await
    .unwrap();
    let (status, answer) = app
        .hook(cc("s-plans", "SessionStart", json!({ "source": "startup" })))
        .await;
    assert_eq!(status, 200, "{answer}");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let plans = context.find("## Plans").expect(context);
    let plan = context.find("### Plan: move the lexer to spans").expect(context);
    let text = context.find("1. tokens carry spans").expect(context);
    let details = context.find("## In detail").expect(context);
    assert!(plans < plan && plan < text && text < details, "{context}");
    assert_eq!(
        context.matches("Plan: move the lexer to spans").count(),
        1,
        "{context}"
    );
    assert!(context.contains("Tokenizer keeps spans"), "{context}");
}

#[tokio::test]
async fn context_as_of_a_commit_shows_memory_as_it_was_then() {
    let app = spawn_app().await;
    let p = app.project_id;
    let kept = remember(&app, p, "Parser is recursive descent", "live", 60).await;
    let replaced = remember(&app, p, "Lexer keeps no spans", "live", 50).await;
    let commit = "89abcdef0123456789abcdef0123456789abcdef";
    sqlx::query(
        "INSERT INTO project_commits (project_id, commit_sha, first_seen_at)
         VALUES ($1, $2, now() - interval '30 minutes'), ($1, 'fedcba9876543210', now() - interval '10 minutes')",
    )
        .bind(p)
        .bind(commit)
        .execute(&app.pool)
        .await
        .unwrap();
    // After the commit: a new memory, and the old lexer memory superseded by it.
    let later = remember(&app, p, "Lexer keeps spans now", "live", 5).await;
    sqlx::query("UPDATE observations SET state = 'superseded', state_changed_at = now(), replaced_by = $2 WHERE id = $1")
        .bind(replaced)
        .bind(later)
        .execute(&app.pool)
        .await
        .unwrap();

    let ids = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, now) = app
        .get(&format!("/v1/projects/{p}/context"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{now}");
    let shown_now: Vec<String> = [ids(&now, "details"), ids(&now, "index")].concat();
    assert!(
        shown_now.contains(&later.to_string()) && shown_now.contains(&kept.to_string()),
        "{now}"
    );
    assert!(
        !shown_now.contains(&replaced.to_string()),
        "superseded now: {now}"
    );

    let (status, then) = app
        .get(
            &format!("/v1/projects/{p}/context?commit={}", &commit[..10]),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200, "{then}");
    let shown_then: Vec<String> = [ids(&then, "details"), ids(&then, "index")].concat();
    assert!(shown_then.contains(&kept.to_string()), "{then}");
    assert!(
        shown_then.contains(&replaced.to_string()),
        "live at the commit: {then}"
    );
    assert!(
        !shown_then.contains(&later.to_string()),
        "written after the commit: {then}"
    );
    let (status, refused) = app
        .get(
            &format!("/v1/projects/{p}/context?commit=fffffff"),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("unknown_commit")),
        "{refused}"
    );
}
