//! The context builder over HTTP: budgeted JSON and markdown, claude-mem's
//! `POST /v1/context`, SessionStart by source, related memories on
//! UserPromptSubmit (opt-in), and what a context never holds.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

async fn remember(app: &TestApp, project: &str, content: &str) -> Value {
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({ "projectId": project, "kind": "decision", "content": content }),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    res["memory"].clone()
}

/// A session with one turn summary, written as the generator would.
async fn summarised_session(app: &TestApp, session: &str, request: &str) {
    let (status, _) = app
        .hook(cc(session, "SessionStart", json!({ "source": "startup" })))
        .await;
    assert_eq!(status, 200);
    sqlx::query(
        "INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, prompt_number,
             request, completed)
         SELECT $1, team_id, project_id, id, 'test:' || $1, 'turn', 1, $2, 'it works now'
         FROM sessions WHERE external_session_id = $3",
    )
    .bind(Uuid::now_v7())
    .bind(request)
    .bind(session)
    .execute(&app.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn context_is_budgeted_json_or_markdown_with_the_newest_summary() {
    let app = spawn_app().await;
    let project = app.project_id.to_string();
    for i in 0..40 {
        remember(
            &app,
            &project,
            &format!("Decision {i}: the cache lives in Redis\n{}", "detail ".repeat(80)),
        )
        .await;
    }
    summarised_session(&app, "ctx-1", "older request about parsing").await;
    summarised_session(&app, "ctx-2", "newest request about caching").await;

    let path = format!("/v1/projects/{project}/context?budget=600");
    let (status, ctx) = app.get(&path, Some(&app.admin_token)).await;
    assert_eq!(status, 200, "{ctx}");
    assert_eq!(ctx["budgetTokens"], 600);
    assert!(ctx["estimatedTokens"].as_u64().unwrap() <= 600, "{ctx}");
    assert_eq!(ctx["summaries"][0]["request"], "newest request about caching");
    assert!(
        ctx["omittedObservations"].as_i64().unwrap() > 0,
        "a small budget leaves some out"
    );
    let markdown = ctx["markdown"].as_str().unwrap();
    assert!(markdown.contains("get_observations"), "{markdown}");
    let listed = ctx["index"].as_array().unwrap().len() + ctx["details"].as_array().unwrap().len();
    let (_, large) = app
        .get(
            &format!("/v1/projects/{project}/context?budget=8000"),
            Some(&app.admin_token),
        )
        .await;
    let listed_large = large["index"].as_array().unwrap().len() + large["details"].as_array().unwrap().len();
    assert!(
        listed_large > listed,
        "a larger budget lists more: {listed_large} vs {listed}"
    );

    let res = app
        .client
        .get(format!(
            "{}/v1/projects/{project}/context?format=markdown",
            app.base
        ))
        .bearer_auth(&app.admin_token)
        .send()
        .await
        .unwrap();
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown")
    );
    assert!(res.text().await.unwrap().starts_with("<cairn-context>"));

    for bad in ["budget=100", "budget=60000", "format=xml", "mode=huge"] {
        let (status, res) = app
            .get(
                &format!("/v1/projects/{project}/context?{bad}"),
                Some(&app.admin_token),
            )
            .await;
        assert_eq!(
            (status, res["error"]["code"].as_str()),
            (422, Some("invalid_field")),
            "{bad}: {res}"
        );
    }
    let (status, _) = app
        .get(
            &format!("/v1/projects/{project}/context"),
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!(status, 200, "the ingest token also reads");
    let (status, _) = app.get(&format!("/v1/projects/{project}/context"), None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn post_context_has_claude_mems_shape_and_query_picks_details() {
    let app = spawn_app().await;
    let project = app.project_id.to_string();
    let target = remember(&app, &project, "Tokio runtime must not block inside the sweeper").await;
    for i in 0..5 {
        remember(&app, &project, &format!("Unrelated note {i} about styling")).await;
    }
    let (status, res) = app
        .post(
            "/v1/context",
            Some(&app.admin_token),
            &json!({ "projectId": project, "query": "sweeper blocking", "limit": 3 }),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(res["observations"].as_array().unwrap().len(), 3);
    assert_eq!(
        res["observations"][0]["id"], target["id"],
        "the query's best match comes first"
    );
    assert!(res["context"].as_str().unwrap().contains("## In detail"), "{res}");
    let (status, res) = app
        .post(
            "/v1/context",
            Some(&app.admin_token),
            &json!({ "projectId": project, "limit": 51 }),
        )
        .await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (422, Some("invalid_field"))
    );
}

#[tokio::test]
async fn a_context_never_holds_another_projects_rows_or_private_content() {
    let app = spawn_app().await;
    let (status, other) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({ "slug": "other" }),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &json!({ "projectId": "other", "content": "zebracorn lives in the other project" }),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    remember(
        &app,
        &app.project_id.to_string(),
        "Deploy key rotation <private>hunter2-zebracorn</private> done; token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    )
    .await;
    for query in ["", "&query=zebracorn", "&query=hunter2"] {
        let (status, ctx) = app
            .get(
                &format!("/v1/projects/{}/context?budget=4000{query}", app.project_id),
                Some(&app.admin_token),
            )
            .await;
        assert_eq!(status, 200);
        let text = ctx.to_string();
        assert!(!text.contains("zebracorn"), "{query}: {text}");
        assert!(!text.contains("hunter2"), "{query}: {text}");
        assert!(!text.contains("sk-ant-api03"), "{query}: {text}");
        assert!(text.contains("Deploy key rotation"), "{query}: {text}");
    }
}

#[tokio::test]
async fn session_start_gives_full_context_and_resume_a_minimal_one() {
    let app = spawn_app().await;
    let project = app.project_id.to_string();
    for i in 0..30 {
        remember(&app, &project, &format!("Finding {i}: {}", "words ".repeat(60))).await;
    }
    summarised_session(&app, "ss-0", "what we did before").await;
    let start = |source: &'static str| cc("ss-1", "SessionStart", json!({ "source": source }));
    let (_, full) = app.hook(start("startup")).await;
    let full = full["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, resume) = app.hook(start("resume")).await;
    let resume = resume["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        full.contains("## In detail") && full.contains("what we did before"),
        "{full}"
    );
    assert!(
        !resume.contains("## In detail") && resume.contains("what we did before"),
        "{resume}"
    );
    assert!(
        resume.len() < full.len() / 2,
        "resume {} vs full {}",
        resume.len(),
        full.len()
    );
    let (_, compact) = app.hook(start("compact")).await;
    assert!(
        compact["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("## In detail")
    );
}

#[tokio::test]
async fn related_memories_on_prompt_are_on_by_default_and_can_be_turned_off() {
    let app = spawn_app().await;
    let project = app.project_id.to_string();
    remember(
        &app,
        &project,
        "Migrations run under an advisory lock so replicas can start together",
    )
    .await;
    let prompt = |id: &str| {
        cc(
            "rp-1",
            "UserPromptSubmit",
            json!({ "prompt": format!("why do migrations use an advisory lock? {id}") }),
        )
    };
    let (status, answer) = app.hook(prompt("a")).await;
    assert_eq!(status, 200);
    let related = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(related.contains("advisory lock"), "on by default: {answer}");

    let (status, res) = app
        .post_raw(
            &format!("/v1/admin/projects/{project}"),
            Some(&app.admin_token),
            b"{\"promptContext\": true}".to_vec(),
            "application/json",
        )
        .await;
    assert_eq!(status, 405, "PATCH, not POST: {res}");
    let patched = app
        .client
        .patch(format!("{}/v1/admin/projects/{project}", app.base))
        .bearer_auth(&app.admin_token)
        .json(&json!({ "promptContext": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let (_, answer) = app.hook(prompt("off")).await;
    assert_eq!(answer, json!({}), "turned off: nothing added");
    let patched = app
        .client
        .patch(format!("{}/v1/admin/projects/{project}", app.base))
        .bearer_auth(&app.admin_token)
        .json(&json!({ "promptContext": true, "promptContextBudgetTokens": 120 }))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let body: Value = patched.json().await.unwrap();
    assert_eq!(body["project"]["promptContext"], true);

    let (_, answer) = app.hook(prompt("b")).await;
    let related = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(related.contains("advisory lock"), "{answer}");
    assert!(cairn_shared::tokens::estimate(related) <= 120, "{related}");
    let (_, unrelated) = app
        .hook(cc(
            "rp-1",
            "UserPromptSubmit",
            json!({ "prompt": "paint the bikeshed" }),
        ))
        .await;
    assert_eq!(unrelated, json!({}), "nothing related: nothing added");

    let bad = app
        .client
        .patch(format!("{}/v1/admin/projects/{project}", app.base))
        .bearer_auth(&app.admin_token)
        .json(&json!({ "contextBudgetTokens": 10 }))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
}
