//! A read replica (`CAIRN_DATABASE_READ_URL`) on a private primary and its
//! streaming standby (`cairn_testkit::standby`). With the standby's replay
//! paused, hooks, idempotent duplicates, a memory just written and token
//! revocation are answered from the primary, while search does not see a
//! memory the standby has not replayed (it reads the standby) until replay
//! resumes. With the standby stopped, SessionStart and readiness still answer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

use crate::helpers::{Options, TestApp, cc, found, spawn_app_on, standby::Replicated};

/// Posts a Claude Code hook with an `Idempotency-Key`.
async fn hook_once(app: &TestApp, key: &str, body: &Value) -> (u16, Value) {
    let res = app
        .client
        .post(format!("{}/v1/hooks/claude-code", app.base))
        .bearer_auth(&app.ingest_token)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn memory(app: &TestApp, content: &str) -> Uuid {
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "content": content, "kind": "discovery"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    res["memory"]["id"].as_str().unwrap().parse().unwrap()
}

async fn events_of(pool: &PgPool, session: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM agent_events e JOIN sessions s ON s.id = e.session_id
         WHERE s.external_session_id = $1",
    )
    .bind(session)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn observation_exists(pool: &PgPool, id: Uuid) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM observations WHERE id = $1)")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn pause_replay(standby: &PgPool) {
    sqlx::query("SELECT pg_wal_replay_pause()")
        .execute(standby)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let state: String = sqlx::query_scalar("SELECT pg_get_wal_replay_pause_state()")
            .fetch_one(standby)
            .await
            .unwrap();
        if state == "paused" {
            return;
        }
        assert!(Instant::now() < deadline, "replay not paused: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn lag_tolerant_reads_go_to_the_replica_and_the_hook_path_and_auth_stay_on_the_primary() {
    let Some(mut clusters) = Replicated::start().await else {
        return;
    };
    // The app migrates and bootstraps the primary; tokens are read on every
    // request (no auth cache to hide where they are read from).
    let first = spawn_app_on(
        clusters.primary_url("postgres"),
        Options {
            extra: vec![
                ("CAIRN_AUTH_CACHE_TTL_MS", "1".into()),
                ("CAIRN_DB_ACQUIRE_TIMEOUT_MS", "1000".into()),
            ],
            ..Options::default()
        },
    )
    .await;
    let known = memory(
        &first,
        "The deploy script needs VAULT_ADDR exported before it runs",
    )
    .await;
    let reader = first
        .mint(json!({"name": "reader", "projectId": first.project_id, "scopes": ["read"]}))
        .await;
    clusters.start_standby().await;
    let app = first
        .restart_with(vec![(
            "CAIRN_DATABASE_READ_URL",
            clusters.standby_url("postgres"),
        )])
        .await;
    drop(first);
    let primary = app.pool.clone();
    let standby = PgPool::connect(&clusters.standby_url("postgres")).await.unwrap();
    clusters.caught_up(&primary, &standby).await;
    let in_recovery: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
        .fetch_one(&standby)
        .await
        .unwrap();
    assert!(in_recovery, "the read URL is a standby");
    assert_eq!(
        found(&app, "query=VAULT_ADDR+deploy&mode=fulltext").await,
        [known],
        "search over the caught-up standby"
    );

    pause_replay(&standby).await;

    // (a) The hook path writes to and reads from the primary: the event is
    // stored there (not on the paused standby), its duplicate is recognised,
    // and SessionStart answers with the project's memory.
    let start = cc("lagging", "SessionStart", json!({"source": "startup"}));
    let (status, answer) = hook_once(&app, "lagging-start", &start).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("VAULT_ADDR"), "{context}");
    let (status, again) = hook_once(&app, "lagging-start", &start).await;
    assert_eq!(status, 200, "{again}");
    let prompt = cc("lagging", "UserPromptSubmit", json!({"prompt": "fix the deploy"}));
    let (status, answer) = hook_once(&app, "lagging-prompt", &prompt).await;
    assert_eq!(status, 200, "{answer}");
    let (status, _) = hook_once(&app, "lagging-prompt", &prompt).await;
    assert_eq!(status, 200);
    assert_eq!(
        events_of(&primary, "lagging").await,
        2,
        "stored on the primary, each once"
    );
    assert_eq!(events_of(&standby, "lagging").await, 0, "the standby lags");

    // (b) A memory written now is on the primary only: its writer reads it
    // back by id (the primary), but search reads the standby and does not find it.
    let fresh = memory(&app, "The zebrafish fixture is quarantined on Fridays").await;
    assert!(observation_exists(&primary, fresh).await);
    assert!(!observation_exists(&standby, fresh).await);
    let (status, by_id) = app
        .get(&format!("/v1/observations?ids={fresh}"), Some(&app.ingest_token))
        .await;
    assert_eq!(status, 200, "{by_id}");
    assert_eq!(by_id["observations"][0]["id"], fresh.to_string());
    let ranked = "query=zebrafish+quarantined&mode=fulltext";
    let newest = "orderBy=newest&limit=100";
    assert!(
        !found(&app, ranked).await.contains(&fresh),
        "ranked search reads its rows from the paused standby"
    );
    assert!(
        !found(&app, newest).await.contains(&fresh),
        "a listing reads the paused standby"
    );

    // (c) Revocation holds at once: tokens are read on the primary, though
    // the standby still holds the token as live.
    let search_as_reader = || app.get("/v1/search?query=deploy", Some(&reader));
    assert_eq!(search_as_reader().await.0, 200);
    let reader_id: Uuid = sqlx::query_scalar("SELECT id FROM api_tokens WHERE name = 'reader'")
        .fetch_one(&primary)
        .await
        .unwrap();
    let (status, res) = app
        .post(
            &format!("/v1/admin/tokens/{reader_id}/revoke"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    let live_on_standby: bool = sqlx::query_scalar("SELECT revoked_at IS NULL FROM api_tokens WHERE id = $1")
        .bind(reader_id)
        .fetch_one(&standby)
        .await
        .unwrap();
    assert!(live_on_standby, "the standby has not replayed the revocation");
    let (status, res) = search_as_reader().await;
    assert_eq!(
        (status, &res["error"]["code"]),
        (403, &json!("token_revoked")),
        "{res}"
    );

    // Replay resumed: search finds the memory.
    sqlx::query("SELECT pg_wal_replay_resume()")
        .execute(&standby)
        .await
        .unwrap();
    clusters.caught_up(&primary, &standby).await;
    assert!(found(&app, ranked).await.contains(&fresh));
    assert!(found(&app, newest).await.contains(&fresh));
    assert_eq!(events_of(&standby, "lagging").await, 2);

    // The standby stopped: SessionStart reads its context from the primary
    // instead, readiness does not depend on the standby, search answers 503.
    standby.close().await;
    clusters.stop_standby();
    let (status, answer) = hook_once(
        &app,
        "down-start",
        &cc("replica-down", "SessionStart", json!({"source": "startup"})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("zebrafish"), "{context}");
    assert_eq!(events_of(&primary, "replica-down").await, 1);
    assert_eq!(app.get("/api/readiness", None).await.0, 200);
    let (status, res) = app.get("/v1/search?query=deploy", Some(&app.ingest_token)).await;
    assert_eq!(status, 503, "{res}");
}
