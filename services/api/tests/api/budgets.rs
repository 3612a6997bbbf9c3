//! Daily LLM token budgets: set through `PATCH /v1/admin/projects/{id}`
//! (audited), reported by `/v1/info`, and the usage route's per-day sums.

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

async fn patch(app: &TestApp, body: Value) -> (u16, Value) {
    let res = app
        .client
        .patch(format!("{}/v1/admin/projects/{}", app.base, app.project_id))
        .bearer_auth(&app.admin_token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

/// A job whose usage was recorded `days_ago` UTC days ago (counted by the usage trigger).
async fn used(app: &TestApp, days_ago: i32, provider: &str, input: i64, output: i64) {
    sqlx::query(
        "INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, status, completed_at,
             updated_at, idempotency_key, usage)
         VALUES (gen_random_uuid(), $1, $2, 'session_summary', 'session', 'completed', now(),
             now() - make_interval(days => $3), gen_random_uuid()::text, $4)",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(days_ago)
    .bind(json!({ "provider": provider, "model": "m", "input_tokens": input, "output_tokens": output }))
    .execute(&app.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn the_budget_is_set_cleared_and_audited() {
    let app = spawn_app().await;
    let (status, res) = patch(&app, json!({ "llmDailyTokenBudget": 50000 })).await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(res["llmDailyTokenBudget"], 50000, "{res}");
    let stored: Option<i64> = sqlx::query_scalar("SELECT llm_daily_token_budget FROM projects WHERE id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, Some(50000));
    let audited: Value = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE action = 'project.update' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(audited["llmDailyTokenBudget"], 50000, "{audited}");

    // Absent leaves it; invalid values are refused; null clears it.
    let (status, res) = patch(&app, json!({ "promptContext": true })).await;
    assert_eq!(
        (status, &res["llmDailyTokenBudget"]),
        (200, &json!(50000)),
        "{res}"
    );
    for bad in [json!(0), json!(-5), json!("lots")] {
        let (status, res) = patch(&app, json!({ "llmDailyTokenBudget": bad })).await;
        assert_eq!(status, 422, "{bad}: {res}");
    }
    let (status, res) = patch(&app, json!({ "llmDailyTokenBudget": null })).await;
    assert_eq!(
        (status, &res["llmDailyTokenBudget"]),
        (200, &Value::Null),
        "{res}"
    );
    let audited: Value = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE action = 'project.update' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(audited["llmDailyTokenBudget"], Value::Null, "{audited}");
}

#[tokio::test]
async fn info_reports_the_budget_state() {
    let app = spawn_app().await;
    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;
    let budget = |info: &Value| info["llmBudget"].clone();

    let (status, info) = app.get("/v1/info", Some(&reader)).await;
    assert_eq!(status, 200, "{info}");
    let b = budget(&info);
    assert_eq!(b["state"], "ok", "{info}");
    assert_eq!(b["project"]["dailyTokenBudget"], Value::Null, "unlimited: {info}");
    assert_eq!(b["project"]["tokensUsedToday"], 0, "{info}");

    patch(&app, json!({ "llmDailyTokenBudget": 1000 })).await;
    used(&app, 0, "anthropic", 600, 100).await;
    used(&app, 0, "heuristic", 5000, 5000).await; // the heuristic spends no model tokens
    used(&app, 1, "anthropic", 5000, 5000).await; // yesterday's
    let (_, info) = app.get("/v1/info", Some(&reader)).await;
    let b = budget(&info);
    assert_eq!(b["project"]["tokensUsedToday"], 700, "{info}");
    assert_eq!(b["project"]["state"], "ok", "70 %: {info}");
    assert_eq!(b["state"], "ok", "{info}");

    used(&app, 0, "openai", 100, 50).await;
    let (_, info) = app.get("/v1/info", Some(&reader)).await;
    let b = budget(&info);
    assert_eq!(
        (
            &b["project"]["tokensUsedToday"],
            &b["project"]["state"],
            &b["state"]
        ),
        (&json!(850), &json!("degraded"), &json!("degraded")),
        "{info}"
    );

    used(&app, 0, "openai", 150, 0).await;
    let (_, info) = app.get("/v1/info", Some(&reader)).await;
    let b = budget(&info);
    assert_eq!(b["project"]["state"], "exhausted", "{info}");
    assert_eq!(b["state"], "exhausted", "{info}");
    assert!(b["resetsAt"].as_str().unwrap().contains("T00:00:00"), "{info}");

    // A team budget counts too; a team token sees its team's line.
    sqlx::query("UPDATE projects SET llm_daily_token_budget = NULL WHERE id = $1")
        .bind(app.project_id)
        .execute(&app.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE teams SET llm_daily_token_budget = 1100 WHERE id = $1")
        .bind(app.team_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let (_, info) = app.get("/v1/info", Some(&reader)).await;
    let b = budget(&info);
    assert_eq!(b["project"]["state"], "ok", "{info}");
    assert_eq!(b["team"]["state"], "degraded", "{info}");
    assert_eq!(b["state"], "degraded", "{info}");
    let (_, info) = app.get("/v1/info", Some(&app.admin_token)).await;
    let b = budget(&info);
    assert_eq!(b["team"]["tokensUsedToday"], 1000, "{info}");
    assert_eq!(b["state"], "degraded", "{info}");
}

#[tokio::test]
async fn usage_is_summed_per_day() {
    let app = spawn_app().await;
    used(&app, 0, "anthropic", 1000, 200).await;
    used(&app, 0, "openai", 500, 100).await;
    used(&app, 0, "heuristic", 9999, 9999).await;
    used(&app, 2, "anthropic", 300, 30).await;
    used(&app, 9, "anthropic", 7, 7).await; // outside the window
    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;
    let path = format!("/v1/projects/{}/usage?days=3", app.project_id);
    let (status, res) = app.get(&path, Some(&reader)).await;
    assert_eq!(status, 200, "{res}");
    let days = res["days"].as_array().unwrap();
    assert_eq!(days.len(), 3, "{res}");
    let today = chrono::Utc::now().date_naive();
    let two_ago = today - chrono::Days::new(2);
    assert_eq!(days[0]["day"], two_ago.to_string(), "{res}");
    assert_eq!(days[2]["day"], today.to_string(), "{res}");
    let sums = |d: &Value| {
        (
            d["inputTokens"].as_i64().unwrap(),
            d["outputTokens"].as_i64().unwrap(),
            d["totalTokens"].as_i64().unwrap(),
            d["llmCalls"].as_i64().unwrap(),
            d["heuristicCalls"].as_i64().unwrap(),
        )
    };
    assert_eq!(sums(&days[2]), (1500, 300, 1800, 2, 1), "{res}");
    assert_eq!(sums(&days[1]), (0, 0, 0, 0, 0), "{res}");
    assert_eq!(sums(&days[0]), (300, 30, 330, 1, 0), "{res}");
    assert_eq!(res["dailyTokenBudget"], Value::Null, "{res}");

    // Default window: 7 days. Bad windows are refused; an ingest-only token may not read.
    let (_, res) = app
        .get(&format!("/v1/projects/{}/usage", app.project_id), Some(&reader))
        .await;
    assert_eq!(res["days"].as_array().unwrap().len(), 7, "{res}");
    for bad in ["0", "91"] {
        let (status, res) = app
            .get(
                &format!("/v1/projects/{}/usage?days={bad}", app.project_id),
                Some(&reader),
            )
            .await;
        assert_eq!(status, 422, "{bad}: {res}");
    }
    let ingest = app
        .mint(json!({"name": "ingest only", "scopes": ["ingest"], "projectId": app.project_id}))
        .await;
    let (status, res) = app
        .get(&format!("/v1/projects/{}/usage", app.project_id), Some(&ingest))
        .await;
    assert_eq!(status, 403, "{res}");
}

/// A day's usage is spread over up to sixteen rows (picked by job id, so
/// concurrent completions do not queue on one row lock); every reader sums them.
#[tokio::test]
async fn usage_spread_over_shards_adds_up() {
    let app = spawn_app().await;
    patch(&app, json!({ "llmDailyTokenBudget": 700 })).await;
    for _ in 0..40 {
        used(&app, 0, "anthropic", 10, 5).await;
    }
    let shards: i64 = sqlx::query_scalar("SELECT count(*) FROM llm_usage_daily WHERE project_id = $1")
        .bind(app.project_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(shards > 1, "40 jobs' usage in {shards} row(s)");
    let path = format!("/v1/projects/{}/usage?days=1", app.project_id);
    let (status, res) = app.get(&path, Some(&app.admin_token)).await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(res["days"].as_array().unwrap().len(), 1, "{res}");
    assert_eq!(res["days"][0]["inputTokens"], 400, "{res}");
    assert_eq!(res["days"][0]["totalTokens"], 600, "{res}");
    assert_eq!(res["days"][0]["llmCalls"], 40, "{res}");
    let reader = app
        .mint(json!({"name": "reader", "scopes": ["read"], "projectId": app.project_id}))
        .await;
    let (_, info) = app.get("/v1/info", Some(&reader)).await;
    let b = &info["llmBudget"];
    assert_eq!(b["project"]["tokensUsedToday"], 600, "{info}");
    assert_eq!(b["team"]["tokensUsedToday"], 600, "{info}");
    assert_eq!(b["state"], "degraded", "{info}");
}

#[tokio::test]
async fn a_team_budget_is_set_by_a_team_admin_and_reported() {
    let app = spawn_app().await;
    let url = format!("{}/v1/admin/teams/{}", app.base, app.team_id);
    let send = |token: String, body: Value| {
        let req = app.client.patch(&url).bearer_auth(token).json(&body);
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let project_admin = app
        .mint(json!({"name": "p-admin", "projectId": app.project_id, "scopes": ["admin"]}))
        .await;
    let (status, res) = send(project_admin, json!({ "llmDailyTokenBudget": 1000 })).await;
    assert_eq!(
        (status, res["error"]["code"].as_str()),
        (403, Some("insufficient_scope")),
        "{res}"
    );
    let (status, res) = send(app.admin_token.clone(), json!({ "llmDailyTokenBudget": 0 })).await;
    assert_eq!(status, 422, "{res}");
    let (status, res) = send(app.admin_token.clone(), json!({ "llmDailyTokenBudget": 1000 })).await;
    assert_eq!(
        (status, res["llmDailyTokenBudget"].as_i64()),
        (200, Some(1000)),
        "{res}"
    );
    used(&app, 0, "openai", 850, 0).await;
    let (_, info) = app.get("/v1/info", Some(&app.ingest_token)).await;
    assert_eq!(info["llmBudget"]["team"]["dailyTokenBudget"], 1000, "{info}");
    assert_eq!(info["llmBudget"]["state"], "degraded", "{info}");
    assert_eq!(
        app.count("SELECT count(*) FROM audit_log WHERE action = 'team.update'")
            .await,
        1
    );
    let (status, res) = send(app.admin_token.clone(), json!({ "llmDailyTokenBudget": null })).await;
    assert_eq!(
        (status, res["llmDailyTokenBudget"].clone()),
        (200, Value::Null),
        "{res}"
    );
}
