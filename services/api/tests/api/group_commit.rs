//! Group commit (`ingest/group_commit.rs`): tool events that arrive while a
//! batch is being written are written together, one call and one commit,
//! and each request is answered after the commit holding its event. Events
//! of one commit share `received_at` (the transaction's time), which is how
//! these tests see the batches.

use std::time::Duration;

use serde_json::json;

use crate::helpers::{cc, spawn_app};

fn tool(session: &str, n: usize) -> serde_json::Value {
    cc(
        session,
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": format!("toolu_{session}_{n}"),
               "tool_input": {"file_path": format!("src/f{n}.rs")}, "tool_response": "ok"}),
    )
}

/// What a spawned request needs of the app.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    url: String,
    token: String,
}

impl Client {
    fn of(app: &cairn_testkit::TestApp) -> Self {
        Self {
            http: app.client.clone(),
            url: format!("{}/v1/hooks/claude-code", app.base),
            token: app.ingest_token.clone(),
        }
    }

    /// Posts a Claude Code hook on a task of its own; its status.
    fn hook(&self, body: serde_json::Value) -> tokio::task::JoinHandle<u16> {
        let this = self.clone();
        tokio::spawn(async move {
            let res = this
                .http
                .post(&this.url)
                .bearer_auth(&this.token)
                .json(&body)
                .send()
                .await;
            res.expect("the request is answered").status().as_u16()
        })
    }
}

/// Waits until some backend of the app's database waits for a row lock.
async fn until_a_statement_waits_on_a_lock(app: &cairn_testkit::TestApp) {
    for _ in 0..500 {
        let waiting = app
            .count(
                "SELECT count(*) FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .await;
        if waiting > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no statement ever waited on the held job row");
}

/// A turn with its job open, that job's row held by a transaction of the
/// test, and one more tool event whose batch waits on it: what the tests
/// queue events behind. Commit the transaction to let the batch through.
async fn a_batch_held_on_the_job_row(
    app: &cairn_testkit::TestApp,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    Client,
    tokio::task::JoinHandle<u16>,
) {
    app.hook(cc("s", "SessionStart", json!({"source": "startup"})))
        .await;
    app.hook(cc("s", "UserPromptSubmit", json!({"prompt": "read them all"})))
        .await;
    let (status, _) = app.hook(tool("s", 0)).await;
    assert_eq!(status, 200);
    let mut holder = app.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM generation_jobs WHERE job_type = 'observations' FOR UPDATE")
        .fetch_all(&mut *holder)
        .await
        .unwrap();
    let client = Client::of(app);
    let first = client.hook(tool("s", 1));
    until_a_statement_waits_on_a_lock(app).await;
    (holder, client, first)
}

/// While one batch waits on a lock, the events behind it queue; they are
/// then written together, each answered, each counted once in the turn's
/// job, and none answered before its commit (the answers come after the
/// lock is released, never while the row is held).
#[tokio::test]
async fn events_queued_behind_a_batch_are_written_together_after_it() {
    let app = spawn_app().await;
    let (holder, client, first) = a_batch_held_on_the_job_row(&app).await;
    let behind: Vec<_> = (2..22).map(|n| client.hook(tool("s", n))).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!first.is_finished(), "answered while its batch could not commit");
    assert!(
        behind.iter().all(|h| !h.is_finished()),
        "an event queued behind the held batch was answered before any commit"
    );
    holder.commit().await.unwrap();

    assert_eq!(first.await.unwrap(), 200);
    for answer in behind {
        assert_eq!(answer.await.unwrap(), 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse'")
            .await,
        22
    );
    let (jobs, counted): (i64, i64) = sqlx::query_as(
        "SELECT count(*), sum(event_count)::bigint FROM generation_jobs WHERE job_type = 'observations'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!((jobs, counted), (1, 22), "one job, every event counted once");
    let largest: i64 = sqlx::query_scalar(
        "SELECT max(n) FROM (SELECT count(*) AS n FROM agent_events
                              WHERE event_type = 'PostToolUse' GROUP BY received_at) c",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(
        largest >= 2,
        "the events queued behind the held batch were committed one by one"
    );
}

/// One event Postgres refuses does not fail the events it was batched with:
/// the batch is written again one event at a time, and only that event fails.
#[tokio::test]
async fn an_event_postgres_refuses_fails_alone() {
    let app = spawn_app().await;
    let (holder, client, first) = a_batch_held_on_the_job_row(&app).await;
    // A NUL character: valid JSON, refused by Postgres's jsonb.
    let mut bad = tool("s", 2);
    bad["tool_response"] = json!("before \u{0} after");
    let good: Vec<_> = (3..12).map(|n| client.hook(tool("s", n))).collect();
    let refused = client.hook(bad);
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.commit().await.unwrap();
    assert_eq!(first.await.unwrap(), 200);
    assert_eq!(refused.await.unwrap(), 422, "a NUL is the client's to fix");
    for answer in good {
        assert_eq!(answer.await.unwrap(), 200);
    }
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE event_type = 'PostToolUse'")
            .await,
        11
    );
    let counted: i64 = sqlx::query_scalar(
        "SELECT sum(event_count)::bigint FROM generation_jobs WHERE job_type = 'observations'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(counted, 11, "the refused event is in no job's count");
}
