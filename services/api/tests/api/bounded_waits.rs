//! Bounded waits and no 5xx on valid input: a locked table answers 503 with
//! `Retry-After` in bounded time; times Postgres cannot store answer 422;
//! retrying a superseded job answers 409; and clients that abandon requests
//! leave no transaction open.

use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::Connection;
use tokio::{io::AsyncWriteExt, net::TcpStream};

use crate::helpers::{Options, cc, spawn_app, spawn_app_with};

#[tokio::test(flavor = "multi_thread")]
async fn a_locked_table_answers_503_with_retry_after_in_bounded_time() {
    let app = spawn_app_with(Options {
        extra: vec![("CAIRN_DB_LOCK_TIMEOUT_MS", "300".into())],
        ..Options::default()
    })
    .await;
    let mut locker = sqlx::PgConnection::connect(&app.database_url).await.unwrap();
    let mut tx = locker.begin().await.unwrap();
    sqlx::query("LOCK TABLE agent_events IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *tx)
        .await
        .unwrap();
    let started = Instant::now();
    let res = app
        .client
        .post(format!("{}/v1/hooks/claude-code", app.base))
        .bearer_auth(&app.ingest_token)
        .json(&cc("locked", "UserPromptSubmit", json!({"prompt": "hi"})))
        .send()
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(res.status(), 503);
    assert!(res.headers().contains_key("retry-after"));
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    tx.rollback().await.unwrap();
    let (status, _) = app
        .hook(cc("locked", "UserPromptSubmit", json!({"prompt": "hi"})))
        .await;
    assert_eq!(status, 200, "the retry is stored once the lock is gone");
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 1);
}

#[tokio::test]
async fn times_before_4713_bc_answer_422_not_500() {
    let app = spawn_app().await;
    let ancient = -300_000_000_000_000i64;
    let (status, res) = app
        .post(
            "/v1/events",
            Some(&app.ingest_token),
            &json!({"projectId": "default", "sourceType": "api", "eventType": "note", "occurredAtEpoch": ancient}),
        )
        .await;
    assert_eq!(status, 422, "{res}");
    for path in [
        format!("/v1/search?project=default&q=x&dateStart={ancient}"),
        "/v1/search?project=default&q=x&dateStart=-5000-01-01T00:00:00Z".to_string(),
        format!("/v1/jobs?since={ancient}"),
    ] {
        let (status, res) = app.get(&path, Some(&app.admin_token)).await;
        assert!((400..500).contains(&status), "{path}: {status} {res}");
        assert!(res["error"]["code"].is_string(), "{res}");
    }
}

#[tokio::test]
async fn retrying_a_cancelled_turn_job_after_a_new_one_opened_answers_409() {
    let app = spawn_app().await;
    let tool = |id: &str| json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": "ls"}});
    app.hook(cc("r", "UserPromptSubmit", json!({"prompt": "p"})))
        .await;
    app.hook(cc("r", "PostToolUse", tool("t1"))).await;
    let job: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM generation_jobs WHERE job_type = 'observations'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let (status, res) = app
        .post(
            &format!("/v1/jobs/{job}/cancel"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    // A new event of the same turn opens a new job for it.
    app.hook(cc("r", "PostToolUse", tool("t2"))).await;
    let (status, res) = app
        .post(
            &format!("/v1/jobs/{job}/retry"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 409, "a conflict, never a 5xx: {res}");
    assert_eq!(res["error"]["code"], "job_superseded", "{res}");
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_abandoning_requests_leave_no_transaction_open() {
    let app = spawn_app().await;
    let mut tasks = vec![];
    for i in 0..400u64 {
        let addr = app.base.trim_start_matches("http://").to_string();
        let token = app.ingest_token.clone();
        tasks.push(tokio::spawn(async move {
            let body = serde_json::to_string(&cc(
                &format!("ab-{}", i % 8),
                if i % 5 == 0 { "UserPromptSubmit" } else { "PostToolUse" },
                json!({"prompt": format!("p{i}"), "tool_name": "Bash", "tool_use_id": format!("t{i}"), "tool_input": {"command": "ls"}}),
            ))
            .unwrap();
            let req = format!(
                "POST /v1/hooks/claude-code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(req.as_bytes()).await.unwrap();
            tokio::time::sleep(Duration::from_micros((i * 7919) % 4000)).await;
            drop(s);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let open = app
        .count(&format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND state LIKE 'idle in transaction%'",
            app.database_url.rsplit('/').next().unwrap()
        ))
        .await;
    assert_eq!(open, 0, "a connection was left inside a transaction");
    // Every event that was stored is whole: one per tool id at most.
    let dups = app
        .count("SELECT count(*) FROM (SELECT idempotency_key FROM agent_events GROUP BY 1 HAVING count(*) > 1) d")
        .await;
    assert_eq!(dups, 0);
}
