//! `cairn projects|tokens|jobs`: tables by default, the API's JSON with
//! `--json`, and a refusal printed with its code and a non-zero exit.

use cairn_testkit::{seed_jobs, spawn_app};

use crate::support::{admin, cairn};

#[tokio::test(flavor = "multi_thread")]
async fn projects_are_created_listed_and_updated() {
    let app = spawn_app().await;
    let run = admin(&app, &["projects", "create", "web-app", "--name", "Web app"]).await;
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stdout.contains("web-app") && run.stdout.contains("Web app"),
        "{}",
        run.stdout
    );

    let run = admin(&app, &["projects", "list"]).await;
    assert!(run.ok, "{}", run.stderr);
    let header = run.stdout.lines().next().unwrap();
    assert!(
        header.contains("SLUG") && header.contains("CONTEXT"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("default") && run.stdout.contains("web-app"),
        "{}",
        run.stdout
    );

    let run = admin(&app, &["projects", "list", "--json"]).await;
    let slugs: Vec<String> = run.json()["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap().to_string())
        .collect();
    assert!(slugs.contains(&"web-app".to_string()), "{slugs:?}");

    let run = admin(
        &app,
        &[
            "projects",
            "update",
            "web-app",
            "--context-budget-tokens",
            "3000",
            "--prompt-context",
            "true",
            "--llm-daily-token-budget",
            "50000",
            "--raw-event-retention-days",
            "30",
            "--json",
        ],
    )
    .await;
    assert!(run.ok, "{}", run.stderr);
    let answer = run.json();
    assert_eq!(answer["project"]["contextBudgetTokens"], 3000);
    assert_eq!(answer["project"]["promptContext"], true);
    assert_eq!(answer["llmDailyTokenBudget"], 50000);
    assert_eq!(answer["project"]["rawEventRetentionDays"], 30);
    let stored = app
        .count("SELECT context_budget_tokens::bigint FROM projects WHERE slug = 'web-app'")
        .await;
    assert_eq!(stored, 3000);

    // Refusals: the API's code and message, exit non-zero.
    let run = admin(&app, &["projects", "create", "web-app"]).await;
    assert!(!run.ok);
    assert!(run.stderr.contains("slug_taken"), "{}", run.stderr);
    let run = admin(&app, &["projects", "update", "nope", "--prompt-context", "false"]).await;
    assert!(!run.ok);
    assert!(
        run.stderr.contains("project_not_found") && run.stderr.contains("404"),
        "{}",
        run.stderr
    );
    let run = admin(
        &app,
        &["projects", "update", "web-app", "--context-budget-tokens", "5"],
    )
    .await;
    assert!(!run.ok);
    assert!(run.stderr.contains("invalid_field"), "{}", run.stderr);
    let run = cairn(&app, &app.ingest_token, &["projects", "list"], b"").await;
    assert!(!run.ok);
    assert!(
        run.stderr.contains("insufficient_scope") || run.stderr.contains("403"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_is_minted_shown_once_listed_and_revoked_for_good() {
    let app = spawn_app().await;
    let run = admin(
        &app,
        &[
            "tokens",
            "create",
            "--name",
            "ci reader",
            "--scope",
            "read,ingest",
            "--project",
            "default",
            "--json",
        ],
    )
    .await;
    assert!(run.ok, "{}", run.stderr);
    let minted = run.json();
    let id = minted["token"]["id"].as_str().unwrap().to_string();
    let secret = minted["secret"].as_str().unwrap().to_string();
    assert_eq!(
        minted["token"]["scopes"],
        serde_json::json!(["ingest", "read"]),
        "stored in canonical order"
    );

    // The new token works.
    let (status, _) = app.get("/v1/whoami", Some(&secret)).await;
    assert_eq!(status, 200);

    let run = admin(&app, &["tokens", "list"]).await;
    assert!(run.ok, "{}", run.stderr);
    let row = run
        .stdout
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(row.contains("ci reader") && row.contains("active"), "{row}");
    assert!(!run.stdout.contains(&secret), "a listing never shows a secret");

    let run = admin(&app, &["tokens", "revoke", &id]).await;
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.contains("revoked"), "{}", run.stdout);
    let (status, _) = app.get("/v1/whoami", Some(&secret)).await;
    assert_eq!(status, 403, "a revoked token is refused");
    let run = admin(
        &app,
        &["tokens", "revoke", "00000000-0000-0000-0000-000000000000"],
    )
    .await;
    assert!(!run.ok);
    assert!(run.stderr.contains("404"), "{}", run.stderr);

    // The table form prints the secret once, after the table.
    let run = admin(
        &app,
        &["tokens", "create", "--name", "hooks", "--scope", "ingest"],
    )
    .await;
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.contains("secret (shown once"), "{}", run.stdout);

    // No token at all: a clear message, not a request.
    let run = cairn(&app, "", &["tokens", "list"], b"").await;
    assert!(!run.ok);
    assert!(run.stderr.contains("no token"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_are_listed_cancelled_and_retried() {
    let app = spawn_app().await;
    seed_jobs(&app.pool, app.team_id, app.project_id, 3).await;
    let run = admin(&app, &["jobs", "list", "--json"]).await;
    assert!(run.ok, "{}", run.stderr);
    let listed = run.json();
    assert_eq!(listed["total"], 3);
    let id = listed["jobs"][0]["id"].as_str().unwrap().to_string();

    let run = admin(&app, &["jobs", "cancel", &id]).await;
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.contains("cancelled"), "{}", run.stdout);
    let run = admin(&app, &["jobs", "list", "--status", "cancelled"]).await;
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stdout.contains(&id) && run.stdout.contains("1 of 1 job(s)"),
        "{}",
        run.stdout
    );

    let run = admin(&app, &["jobs", "retry", &id, "--json"]).await;
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(run.json()["generationJob"]["status"], "queued");
    let status = app
        .count(&format!(
            "SELECT count(*) FROM generation_jobs WHERE id = '{id}' AND status = 'queued'"
        ))
        .await;
    assert_eq!(status, 1);

    let run = admin(&app, &["jobs", "list", "--status", "bogus"]).await;
    assert!(!run.ok);
    assert!(run.stderr.contains("invalid_status"), "{}", run.stderr);
}
