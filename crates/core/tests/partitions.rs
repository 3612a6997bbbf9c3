//! Migration 0029 on a database that already holds raw events: no row is
//! copied, the old table becomes the partition of everything before
//! (`agent_events_before`), idempotency keys carry over, the job log's id
//! sequence goes on, new weekly partitions exist ahead, and retention can
//! later drop the old partition whole.

use cairn_core::{
    store::{events, retention},
    tenancy::ProjectRef,
};
use chrono::{Duration, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// A database migrated up to (not including) `version`.
async fn migrated_before(version: i64) -> PgPool {
    let url = cairn_testkit::fresh_database().await;
    let pool = PgPool::connect(&url).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations");
    for entry in std::fs::read_dir(source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let number: i64 = name.split('_').next().unwrap().parse().unwrap();
        if number < version {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    sqlx::migrate::Migrator::new(dir.path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    pool
}

#[tokio::test]
async fn existing_events_stay_where_they_are_and_keep_their_keys() {
    let pool = migrated_before(29).await;
    // The schema of before 0029: rows straight in the tables.
    let (team, project) = (Uuid::now_v7(), Uuid::now_v7());
    sqlx::query("INSERT INTO teams (id, name, slug) VALUES ($1, 'T', 't')")
        .bind(team)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO projects (id, team_id, name, slug) VALUES ($1, $2, 'P', 'p')")
        .bind(project)
        .bind(team)
        .execute(&pool)
        .await
        .unwrap();
    let session: Uuid = sqlx::query_scalar(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, status, ended_at)
         VALUES (gen_random_uuid(), $1, $2, 'claude-code', 's', 'ended', now()) RETURNING id",
    )
    .bind(team)
    .bind(project)
    .fetch_one(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO agent_events (id, team_id, project_id, session_id, source_adapter, source_type, event_type,
             idempotency_key, occurred_at, received_at)
         SELECT gen_random_uuid(), $1, $2, $3, 'claude-code', 'hook', 'PostToolUse', 'old-' || g,
                now() - g * interval '1 day', now() - g * interval '1 day'
           FROM generate_series(1, 50) g",
    )
    .bind(team)
    .bind(project)
    .bind(session)
    .execute(&pool)
    .await
    .unwrap();
    let job: Uuid = sqlx::query_scalar(
        "INSERT INTO generation_jobs (id, team_id, project_id, session_id, job_type, source_type, idempotency_key,
             status, completed_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'session_summary', 'session', 'j', 'completed', now()) RETURNING id",
    )
    .bind(team)
    .bind(project)
    .bind(session)
    .fetch_one(&pool)
    .await
    .unwrap();
    let log_completion = || {
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO generation_job_events (job_id, team_id, project_id, to_status, actor)
             VALUES ($1, $2, $3, 'completed', 'test') RETURNING id",
        )
        .bind(job)
        .bind(team)
        .bind(project)
        .fetch_one(&pool)
    };
    let old_log = log_completion().await.unwrap();

    cairn_shared::db::run_migrations(&pool).await.unwrap();

    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
    };
    assert_eq!(
        count("SELECT count(*) FROM agent_events WHERE tableoid = 'agent_events_before'::regclass").await,
        50
    );
    assert_eq!(count("SELECT count(*) FROM agent_event_keys").await, 50);
    assert!(
        count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'agent_events'::regclass").await >= 8,
        "weekly partitions ahead, and the default"
    );
    let scope = ProjectRef {
        team_id: team,
        id: project,
    };
    let old = events::find_by_key(&pool, project, "old-7").await.unwrap();
    assert!(old.is_some(), "an old event is found by its key");
    let new_event = |key: &'static str| events::NewEvent {
        id: Uuid::now_v7(),
        project: scope,
        session_id: Some(session),
        job_id: None,
        source_adapter: "claude-code",
        source_type: "hook",
        event_type: "PostToolUse",
        platform_source: None,
        source_event_id: None,
        idempotency_key: key,
        prompt_number: None,
        tool_name: None,
        payload: &serde_json::Value::Null,
        metadata: &serde_json::Value::Null,
        occurred_at: Utc::now(),
        member_id: None,
    };
    let mut conn = pool.acquire().await.unwrap();
    assert!(
        events::insert(&mut conn, new_event("old-7"))
            .await
            .unwrap()
            .is_none(),
        "a replay of an old event is a duplicate"
    );
    assert!(
        events::insert(&mut conn, new_event("new-1"))
            .await
            .unwrap()
            .is_some()
    );
    drop(conn);
    let new_log = log_completion().await.unwrap();
    assert!(new_log > old_log, "the job log's ids go on");

    // Once everything in it is past retention, the old partition goes whole.
    let shed = retention::run(&pool, 30, Utc::now() + Duration::days(60))
        .await
        .unwrap();
    assert_eq!(shed.events_dropped, 51, "{shed:?}");
    assert_eq!(
        count("SELECT count(*) FROM pg_class WHERE relname = 'agent_events_before'").await,
        0
    );
    assert_eq!(count("SELECT count(*) FROM agent_event_keys").await, 0);
}
