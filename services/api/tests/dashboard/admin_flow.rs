//! The admin's flow in Chromium: sign in, mint a token and see its secret
//! once, revoke it, find and edit and delete an observation, retry and
//! cancel jobs, the usage chart, an observation arriving live, sign out.

use cairn_testkit::{TestApp, seed_jobs, spawn_app};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{browser, fill, js, publish_live, screenshot, sign_in_browser, wait_for, wait_text};

async fn click(c: &Client, css: &str, text: &str) {
    wait_text(c, css, text).await.click().await.unwrap();
}

async fn nav(c: &Client, page: &str) {
    c.find(Locator::Css(&format!("nav a[data-page={page}]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

async fn seed_memory(app: &TestApp, content: &str) -> String {
    seed_memory_in(app, content, None).await
}

async fn seed_memory_in(app: &TestApp, content: &str, session: Option<&str>) -> String {
    let (status, body) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &json!({"projectId": app.project_id, "kind": "decision", "content": content,
                    "serverSessionId": session}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body["memory"]["id"].as_str().unwrap().to_string()
}

async fn job_status(app: &TestApp, id: Uuid) -> String {
    sqlx::query_scalar("SELECT status FROM generation_jobs WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_admin_signs_in_mints_and_revokes_a_token_and_signs_out() {
    let app = spawn_app().await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    let scopes = wait_for(c, "#who-scopes").await.text().await.unwrap();
    assert!(
        scopes.contains("superadmin") && scopes.contains("admin"),
        "{scopes}"
    );
    let team: String = sqlx::query_scalar("SELECT name FROM teams WHERE id = $1")
        .bind(app.team_id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    wait_text(c, "#who-team", &team).await;
    // The token is kept nowhere the page can read; the cookie is HttpOnly.
    let stored = js(
        c,
        "return JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie",
    )
    .await;
    assert!(!stored.to_string().contains(&app.admin_token), "{stored}");
    assert!(!stored.to_string().contains("cairn_session"), "{stored}");

    nav(c, "tokens").await;
    fill(c, "#mint-name", "ci-bot").await;
    c.find(Locator::Css("#mint-token button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let secret = wait_for(c, "#minted-secret").await.text().await.unwrap();
    let (status, who) = app.get("/v1/whoami", Some(&secret)).await;
    assert_eq!(
        (status, who["name"].as_str()),
        (200, Some("ci-bot")),
        "the secret shown works"
    );
    wait_text(c, "td .token-name", "ci-bot").await;
    screenshot(c, "tokens-minted").await;
    // Shown once: gone after a reload.
    c.refresh().await.unwrap();
    wait_text(c, "td .token-name", "ci-bot").await;
    assert!(c.find(Locator::Css("#minted-secret")).await.is_err());
    assert!(!c.source().await.unwrap().contains(&secret));

    click(c, "button.danger", "Revoke ci-bot").await;
    click(c, "button.danger", "Confirm revoking ci-bot").await;
    wait_text(c, "tr", "revoked").await;
    let (status, err) = app.get("/v1/whoami", Some(&secret)).await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (403, Some("token_revoked"))
    );

    nav(c, "audit").await;
    wait_text(c, "td code", "token.revoke").await;

    c.find(Locator::Css("#sign-out"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(c, "#token").await;
    let status = js(c, "return fetch('/v1/whoami').then(r => r.status)").await;
    assert_eq!(status, json!(401), "signed out: the cookie is gone");
}

#[tokio::test]
async fn an_admin_finds_edits_and_deletes_an_observation() {
    let app = spawn_app().await;
    seed_memory(&app, "The linker needs mold for faster builds").await;
    let (status, started) = app
        .post(
            "/v1/sessions/start",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "externalSessionId": "s-flux", "platformSource": "claude-code"}),
        )
        .await;
    assert!(status == 200 || status == 201, "{started}");
    let session = started["session"]["id"].as_str().unwrap().to_string();
    let id = seed_memory_in(
        &app,
        "The flux capacitor needs 1.21 gigawatts to start",
        Some(&session),
    )
    .await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    nav(c, "observations").await;
    fill(c, "#query", "capacitor").await;
    c.find(Locator::Css("#search button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let hit = wait_text(c, "a.hit-title", "flux capacitor").await;
    assert!(
        c.find_all(Locator::Css("a.hit-title")).await.unwrap().len() == 1,
        "only the match"
    );
    screenshot(c, "search").await;
    hit.click().await.unwrap();
    wait_text(c, "#observation-content", "1.21 gigawatts").await;

    // A manual memory's text follows its narrative.
    fill(
        c,
        "#edit-narrative",
        "The flux capacitor needs 2.42 gigawatts after the upgrade",
    )
    .await;
    fill(c, "#edit-title", "Flux capacitor power").await;
    c.find(Locator::Css("#edit-observation button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(c, "#observation-title", "Flux capacitor power").await;
    wait_text(c, "#observation-content", "2.42 gigawatts").await;
    let (_, got) = app
        .get(
            &format!("/v1/observations?projectId={}&ids={id}", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert!(
        got["observations"][0]["content"]
            .as_str()
            .unwrap()
            .contains("2.42"),
        "{got}"
    );
    assert_eq!(
        got["observations"][0]["metadata"]["title"], "Flux capacitor power",
        "{got}"
    );
    // Audited.
    let (_, audit) = app.get("/v1/admin/audit", Some(&app.admin_token)).await;
    assert!(audit.to_string().contains(&id), "{audit}");

    // Its session, as a timeline.
    c.find(Locator::Css("#observation-session"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(c, "#session-title", &session[..8]).await;
    wait_text(c, "main dl", "claude-code").await;
    c.back().await.unwrap();
    wait_text(c, "#observation-title", "Flux capacitor power").await;

    click(c, "button.danger", "Delete this memory").await;
    click(c, "button.danger", "Confirm delete").await;
    wait_text(c, "main .notice", "Deleted").await;
    let (_, got) = app
        .get(
            &format!("/v1/observations?projectId={}&ids={id}", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(got["observations"], json!([]), "{got}");
}

#[tokio::test]
async fn an_admin_retries_a_failed_job_cancels_a_queued_one_and_sees_usage() {
    let app = spawn_app().await;
    let session = seed_jobs(&app.pool, app.team_id, app.project_id, 2).await;
    let ids: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM generation_jobs ORDER BY prompt_number")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    let (failed, queued) = (ids[0], ids[1]);
    sqlx::query(
        "UPDATE generation_jobs SET status = 'failed', failed_at = now(), attempts = max_attempts,
             last_error = 'provider answered 503' WHERE id = $1",
    )
    .bind(failed)
    .execute(&app.pool)
    .await
    .unwrap();
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    nav(c, "jobs").await;
    let short = |id: Uuid| id.to_string()[..8].to_string();
    wait_text(c, &format!("span[data-job='{failed}']"), "failed").await;
    wait_text(c, "td", "provider answered 503").await;
    assert!(
        wait_for(c, "#usage svg.chart")
            .await
            .attr("aria-label")
            .await
            .unwrap()
            .unwrap()
            .contains("LLM tokens")
    );
    screenshot(c, "jobs").await;
    click(c, "button.retry", &format!("Retry {}", short(failed))).await;
    wait_text(c, &format!("span[data-job='{failed}']"), "queued").await;
    assert_eq!(job_status(&app, failed).await, "queued");

    click(c, "button.danger", &format!("Cancel {}", short(queued))).await;
    click(c, "button.danger", "Confirm cancel").await;
    wait_text(c, &format!("span[data-job='{queued}']"), "cancelled").await;
    assert_eq!(job_status(&app, queued).await, "cancelled");

    // The generator finishes the retried job: the list follows without reload.
    wait_for(c, "#jobs[data-live=open]").await;
    js(c, "window.__stayed = true; return null").await;
    sqlx::query("UPDATE generation_jobs SET status = 'completed', completed_at = now() WHERE id = $1")
        .bind(failed)
        .execute(&app.pool)
        .await
        .unwrap();
    let notice = json!({"type": "job.changed", "jobId": failed, "projectId": app.project_id,
        "status": "completed", "jobType": "observations"});
    publish_live(app.project_id, &notice).await;
    wait_text(c, &format!("span[data-job='{failed}']"), "completed").await;
    assert_eq!(
        js(c, "return window.__stayed === true").await,
        json!(true),
        "no reload"
    );

    // The jobs' session as a timeline: its turns, their events and jobs.
    // It was ended by the sweeper (an unclean exit), held work from before
    // any prompt (a recovery turn) and got one event after its end.
    sqlx::query(
        "WITH ended AS (
             UPDATE sessions SET status = 'ended', ended_at = now() - interval '1 minute',
                 metadata = metadata || '{\"ended_by\": \"sweeper\"}'
             WHERE id = $1 RETURNING id, team_id, project_id)
         INSERT INTO agent_events (id, team_id, project_id, session_id, source_adapter, source_type, event_type,
             idempotency_key, prompt_number, tool_name, payload, occurred_at)
         SELECT gen_random_uuid(), team_id, project_id, id, 'claude-code', 'hook', 'PostToolUse',
             'late:' || id || ':' || n, CASE n WHEN 0 THEN NULL ELSE 2 END, 'Bash', '{}',
             CASE n WHEN 0 THEN now() - interval '1 hour' ELSE now() END
         FROM ended, generate_series(0, 1) n",
    )
    .bind(session)
    .execute(&app.pool)
    .await
    .unwrap();
    nav(c, "sessions").await;
    wait_text(c, &format!("a[href='#/sessions/{session}']"), "")
        .await
        .click()
        .await
        .unwrap();
    wait_text(c, "#session-title", &session.to_string()[..8]).await;
    wait_text(c, ".turn h2", "Turn 1").await;
    wait_text(c, ".turn h2", "Turn 2").await;
    wait_text(c, ".turn td", "cancelled").await;
    wait_text(c, ".turn summary", "1 event").await;
    wait_text(c, ".turn h2", "recovery").await;
    wait_text(c, "dd", "ended by the sweeper").await;
    wait_text(c, ".turn summary", "2 events")
        .await
        .click()
        .await
        .unwrap();
    wait_text(c, ".events li", "after end").await;
    screenshot(c, "session-timeline").await;
}

#[tokio::test]
async fn a_new_observation_appears_live_without_reload() {
    let app = spawn_app().await;
    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    nav(c, "live").await;
    wait_for(c, "#live-state[data-state=open]").await;
    js(c, "window.__stayed = true; return null").await;
    // A memory written through the API, announced on the channel the
    // generator publishes on (cairn:live:{project}), as the generator does.
    let id = seed_memory(&app, "Redis streams fan out per project").await;
    let notice = json!({"type": "observation.created", "id": id, "project_id": app.project_id,
        "session_id": Value::Null, "job_id": Uuid::nil(), "title": "Redis streams fan out per project"});
    publish_live(app.project_id, &notice).await;
    wait_text(c, "#live-feed a.live-observation", "Redis streams fan out").await;
    assert_eq!(
        js(c, "return window.__stayed === true").await,
        json!(true),
        "no reload"
    );
    screenshot(c, "live").await;
}
