//! Lifecycle states in what is given back (migration 0014): search leaves
//! merged and archived memories out and says which hits are stale; context
//! never injects superseded, merged or archived ones and marks stale ones.

use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

async fn remember(app: &TestApp, title: &str, state: &str) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative, state)
         VALUES ($1, $2, $3, 'test:' || $1, 'discovery', $4, 'tokenizer overflow notes', $5)",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(title)
    .bind(state)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

#[tokio::test]
async fn search_and_context_honour_memory_states() {
    let app = spawn_app().await;
    remember(&app, "Live tokenizer fact", "live").await;
    remember(&app, "Stale tokenizer fact", "stale").await;
    remember(&app, "Superseded tokenizer fact", "superseded").await;
    remember(&app, "Merged tokenizer fact", "merged").await;
    remember(&app, "Archived tokenizer fact", "archived").await;

    let (status, found) = app
        .get("/v1/search?query=tokenizer", Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{found}");
    let text = found.to_string();
    for present in ["Live tokenizer", "Stale tokenizer", "Superseded tokenizer"] {
        assert!(text.contains(present), "{present} missing: {text}");
    }
    for absent in ["Merged tokenizer", "Archived tokenizer"] {
        assert!(!text.contains(absent), "{absent} found: {text}");
    }
    let stale = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h.to_string().contains("Stale tokenizer"))
        .unwrap();
    assert_eq!(stale["observation"]["metadata"]["state"], "stale", "{stale}");

    let (status, answer) = app
        .hook(cc("s-ctx", "SessionStart", json!({ "source": "startup" })))
        .await;
    assert_eq!(status, 200, "{answer}");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(context.contains("Live tokenizer fact"), "{context}");
    assert!(
        context.contains("Stale tokenizer fact (stale: its files changed since)"),
        "{context}"
    );
    for absent in ["Superseded tokenizer", "Merged tokenizer", "Archived tokenizer"] {
        assert!(!context.contains(absent), "{absent} injected: {context}");
    }
}
