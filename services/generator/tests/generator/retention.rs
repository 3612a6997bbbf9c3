//! Raw-event retention (`store::retention`): past it, a digested session's
//! raw events go with their week's partition, while an undigested one's
//! (a job not completed, a session still open) stay, moved to the default
//! partition; memories and summaries stay; a project may keep its events
//! longer; a partition holding many rows to keep loses only the expired
//! ones. The pass runs as if two months had gone by.

use cairn_core::store::retention::{self, Shed};
use cairn_testkit::{TestApp, cc, spawn_app};
use chrono::{Duration, Utc};
use serde_json::json;
use uuid::Uuid;

/// A whole session: start, one turn of three tools and a Stop, end.
async fn finished_session(app: &TestApp, session: &str) {
    app.hook(cc(session, "SessionStart", json!({"source": "startup"})))
        .await;
    app.hook(cc(
        session,
        "UserPromptSubmit",
        json!({"prompt": "fix the login bug"}),
    ))
    .await;
    for n in 0..3 {
        app.hook(cc(
            session,
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": format!("toolu_{session}_{n}"),
                   "tool_input": {"file_path": "src/login.rs", "old_string": "a", "new_string": "b"},
                   "tool_response": "ok"}),
        ))
        .await;
    }
    app.hook(cc(
        session,
        "Stop",
        json!({"last_assistant_message": "Fixed the login bug."}),
    ))
    .await;
    app.hook(cc(session, "SessionEnd", json!({"reason": "exit"})))
        .await;
}

/// A session still at work: a prompt and two tools, nothing digested.
async fn open_session(app: &TestApp, session: &str) {
    app.hook(cc(session, "UserPromptSubmit", json!({"prompt": "keep going"})))
        .await;
    for n in 0..2 {
        app.hook(cc(
            session,
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": format!("toolu_{session}_{n}"),
                   "tool_input": {"file_path": "src/a.rs"}, "tool_response": "ok"}),
        ))
        .await;
    }
}

async fn events_of(app: &TestApp, session: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) FROM agent_events e JOIN sessions s ON s.id = e.session_id
          WHERE s.external_session_id = '{session}'"
    ))
    .await
}

async fn partitions(app: &TestApp) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'agent_events'::regclass ORDER BY 1",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn digested_events_go_with_their_partition_and_undigested_ones_stay() {
    let app = spawn_app().await;
    finished_session(&app, "done").await;
    open_session(&app, "busy").await;
    app.generate().await;
    let done = events_of(&app, "done").await;
    let busy = events_of(&app, "busy").await;
    assert_eq!((done, busy), (7, 3));
    let memories = app.count("SELECT count(*) FROM observations").await
        + app.count("SELECT count(*) FROM summaries").await;
    assert!(memories > 0, "the finished session was digested");
    let week: String = sqlx::query_scalar("SELECT tableoid::regclass::text FROM agent_events LIMIT 1")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(week.starts_with("agent_events_w"), "{week}");

    // The open turn's job has been tried once and waits for its retry: its log stays.
    sqlx::query(
        "INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor)
         SELECT id, team_id, project_id, 'processing', 'queued', 'test' FROM generation_jobs WHERE status = 'queued'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let unfinished_log =
        "SELECT count(*) FROM generation_job_events l JOIN generation_jobs j ON j.id = l.job_id
                           WHERE j.status = 'queued'";
    let logged = app.count(unfinished_log).await;
    assert!(logged > 0);

    // Within retention nothing goes.
    let shed = retention::run(&app.pool, 30, Utc::now()).await.unwrap();
    assert_eq!(shed, Shed::default());

    let later = Utc::now() + Duration::days(60);
    let shed = retention::run(&app.pool, 30, later).await.unwrap();
    assert_eq!(shed.events_dropped, 7, "{shed:?}");
    assert_eq!(shed.events_kept, 3, "{shed:?}");
    assert!(shed.partitions_dropped >= 1, "{shed:?}");
    assert!(
        shed.job_log_dropped > 0,
        "completed jobs' log rows go too: {shed:?}"
    );
    assert!(
        !partitions(&app).await.contains(&week),
        "the week's partition is gone"
    );
    assert_eq!(events_of(&app, "done").await, 0);
    assert_eq!(
        events_of(&app, "busy").await,
        3,
        "an undigested session keeps its events"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM agent_events WHERE tableoid = 'agent_events_default'::regclass")
            .await,
        3,
        "kept events moved to the default partition"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM agent_event_keys").await,
        3,
        "the dropped events' keys went with them"
    );
    assert_eq!(
        app.count("SELECT count(*) FROM observations").await
            + app.count("SELECT count(*) FROM summaries").await,
        memories,
        "memories and summaries stay"
    );
    assert_eq!(
        app.count(unfinished_log).await,
        logged,
        "an unfinished job keeps its log"
    );

    // A replay of a kept event is still known; the session's work goes on.
    open_session(&app, "busy").await;
    assert_eq!(
        events_of(&app, "busy").await,
        3,
        "replays of kept events are duplicates"
    );

    // Once digested, the kept events go at the next pass.
    app.hook(cc("busy", "Stop", json!({"last_assistant_message": "done"})))
        .await;
    app.hook(cc("busy", "SessionEnd", json!({"reason": "exit"})))
        .await;
    app.generate().await;
    let shed = retention::run(&app.pool, 30, later).await.unwrap();
    assert_eq!(events_of(&app, "busy").await, 0, "{shed:?}");
    assert_eq!(shed.events_kept, 0, "{shed:?}");
}

#[tokio::test]
async fn a_project_that_keeps_its_events_longer_keeps_them() {
    let app = spawn_app().await;
    finished_session(&app, "short").await;
    app.generate().await;
    let other = app.create_project("keeper").await;
    let (status, body) = app
        .patch(
            &format!("/v1/admin/projects/{other}"),
            Some(&app.admin_token),
            &json!({"rawEventRetentionDays": 0}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["project"]["rawEventRetentionDays"], 0);
    for bad in [json!(-1), json!(40_000), json!("x")] {
        let (status, body) = app
            .patch(
                &format!("/v1/admin/projects/{other}"),
                Some(&app.admin_token),
                &json!({"rawEventRetentionDays": bad}),
            )
            .await;
        assert_eq!(status, 422, "{body}");
    }
    // Digested events of the keeper project, more than are ever moved.
    let session = keeper_session(&app, other).await;
    sqlx::query(
        "INSERT INTO agent_events (id, team_id, project_id, session_id, source_adapter, source_type, event_type,
             idempotency_key, occurred_at)
         SELECT gen_random_uuid(), $1, $2, $3, 'claude-code', 'hook', 'PostToolUse', 'bulk-' || g, now()
           FROM generate_series(1, 5001) g",
    )
    .bind(app.team_id)
    .bind(other)
    .bind(session)
    .execute(&app.pool)
    .await
    .unwrap();
    let week: String = sqlx::query_scalar("SELECT tableoid::regclass::text FROM agent_events LIMIT 1")
        .fetch_one(&app.pool)
        .await
        .unwrap();

    let shed = retention::run(&app.pool, 30, Utc::now() + Duration::days(60))
        .await
        .unwrap();
    assert_eq!(events_of(&app, "short").await, 0, "{shed:?}");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) FROM agent_events WHERE project_id = '{other}'"
        ))
        .await,
        5001,
        "kept for ever"
    );
    assert_eq!(shed.events_dropped, 7, "{shed:?}");
    assert!(
        partitions(&app).await.contains(&week),
        "too much to keep: rows deleted, the partition stays"
    );
}

/// An ended session of `project`, straight in the table.
async fn keeper_session(app: &TestApp, project: Uuid) -> Uuid {
    sqlx::query_scalar(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, status, ended_at)
         VALUES ($1, $2, $3, 'claude-code', 'keeper', 'ended', now()) RETURNING id",
    )
    .bind(Uuid::now_v7())
    .bind(app.team_id)
    .bind(project)
    .fetch_one(&app.pool)
    .await
    .unwrap()
}
