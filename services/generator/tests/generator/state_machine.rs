//! The state machine against real rows: claims are exclusive, only the lock
//! owner leaves `processing`, a late completion from a lost claim writes
//! nothing, and the schema refuses impossible states.

use std::time::Duration;

use cairn_generator::{
    job::write,
    parse::{Parsed, ParsedObservation},
    provider::Usage,
};
use cairn_shared::jobs::{
    JobStatus, JobType,
    state_machine::{self, ClaimTarget, ClaimedJob, Transition, TransitionError},
};
use cairn_testkit::{TestApp, spawn_app};

use super::support::{post_turn, rows};

fn parsed() -> Parsed {
    Parsed {
        observations: vec![ParsedObservation {
            kind: "change".into(),
            title: "t".into(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

async fn claim_observations(app: &TestApp, worker: &str, lease: Duration) -> ClaimedJob {
    let id: uuid::Uuid = sqlx::query_scalar(
        "SELECT id FROM generation_jobs WHERE project_id = $1 AND job_type = 'observations'",
    )
    .bind(app.project_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let mut claimed = state_machine::claim(&app.pool, worker, lease, ClaimTarget::Job(id))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "{worker} claims the job");
    claimed.remove(0)
}

/// The id of the app's one job of `job_type`.
async fn job_id(app: &TestApp, job_type: &str) -> uuid::Uuid {
    sqlx::query_scalar("SELECT id FROM generation_jobs WHERE project_id = $1 AND job_type = $2")
        .bind(app.project_id)
        .bind(job_type)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

async fn transitions(app: &TestApp, job: uuid::Uuid) -> Vec<(Option<String>, String, String)> {
    sqlx::query_as(
        "SELECT from_status, to_status, actor FROM generation_job_events WHERE job_id = $1 ORDER BY id",
    )
    .bind(job)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_claim_is_exclusive_and_completion_is_logged() {
    let app = spawn_app().await;
    post_turn(&app, "sm-1", "prompt").await;
    let job = claim_observations(&app, "w-a", Duration::from_secs(30)).await;
    assert_eq!(job.attempts, 1);
    let again = state_machine::claim(
        &app.pool,
        "w-b",
        Duration::from_secs(30),
        ClaimTarget::Job(job.id),
    )
    .await
    .unwrap();
    assert!(again.is_empty(), "a processing job cannot be claimed twice");

    let notices = write::complete(
        &app.pool,
        &job,
        JobType::Observations,
        "w-a",
        &parsed(),
        &Usage::default(),
    )
    .await
    .unwrap();
    assert_eq!(notices.len(), 1);
    let log = transitions(&app, job.id).await;
    assert_eq!(
        log,
        [
            (Some("queued".into()), "processing".into(), "w-a".into()),
            (Some("processing".into()), "completed".into(), "w-a".into())
        ]
    );
    // Nothing leaves a terminal state but an operator retry.
    let mut conn = app.pool.acquire().await.unwrap();
    let err = state_machine::apply(
        &mut conn,
        app.project_id,
        job.id,
        Transition::Cancel { actor: "op" },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            TransitionError::Refused {
                found: Some(JobStatus::Completed),
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_late_completion_from_a_rescued_claim_changes_nothing() {
    let app = spawn_app().await;
    post_turn(&app, "sm-2", "prompt").await;
    let dead = claim_observations(&app, "w-dead", Duration::from_millis(1)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let rescued = state_machine::rescue_expired(&app.pool, "rescuer", Duration::ZERO, 10)
        .await
        .unwrap();
    assert_eq!(rescued.len(), 1);
    assert_eq!(
        (rescued[0].status.as_str(), rescued[0].previous_owner.as_str()),
        ("queued", "w-dead")
    );

    let alive = claim_observations(&app, "w-alive", Duration::from_secs(30)).await;
    assert_eq!(alive.attempts, 2);
    let late = write::complete(
        &app.pool,
        &dead,
        JobType::Observations,
        "w-dead",
        &parsed(),
        &Usage::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            late,
            TransitionError::Refused {
                found: Some(JobStatus::Processing),
                ..
            }
        ),
        "{late}"
    );
    assert_eq!(
        rows(&app, "observations").await,
        0,
        "the refused completion wrote nothing"
    );

    write::complete(
        &app.pool,
        &alive,
        JobType::Observations,
        "w-alive",
        &parsed(),
        &Usage::default(),
    )
    .await
    .unwrap();
    assert_eq!(rows(&app, "observations").await, 1);
    let completions = transitions(&app, alive.id)
        .await
        .into_iter()
        .filter(|t| t.1 == "completed")
        .count();
    assert_eq!(completions, 1);
}

#[tokio::test]
async fn cancel_while_processing_refuses_the_worker_and_operator_retry_requeues() {
    let app = spawn_app().await;
    post_turn(&app, "sm-3", "prompt").await;
    let job = claim_observations(&app, "w-a", Duration::from_secs(30)).await;
    let mut conn = app.pool.acquire().await.unwrap();
    state_machine::apply(
        &mut conn,
        app.project_id,
        job.id,
        Transition::Cancel { actor: "op" },
    )
    .await
    .unwrap();
    let err = write::complete(
        &app.pool,
        &job,
        JobType::Observations,
        "w-a",
        &parsed(),
        &Usage::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            TransitionError::Refused {
                found: Some(JobStatus::Cancelled),
                ..
            }
        ),
        "{err}"
    );
    let status = state_machine::apply(
        &mut conn,
        app.project_id,
        job.id,
        Transition::OperatorRetry { actor: "op" },
    )
    .await
    .unwrap();
    assert_eq!(status, JobStatus::Queued);
    let again = claim_observations(&app, "w-b", Duration::from_secs(30)).await;
    assert_eq!(again.attempts, 1, "an operator retry starts the attempts afresh");
}

#[tokio::test]
async fn only_the_lock_owner_leaves_processing_and_release_does_not_count() {
    let app = spawn_app().await;
    post_turn(&app, "sm-4", "prompt").await;
    let job = claim_observations(&app, "w-a", Duration::from_secs(30)).await;
    let mut conn = app.pool.acquire().await.unwrap();
    let err = state_machine::apply(
        &mut conn,
        app.project_id,
        job.id,
        Transition::Fail {
            worker: "w-other",
            error: "x",
            usage: None,
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            TransitionError::Refused {
                found: Some(JobStatus::Processing),
                ..
            }
        ),
        "{err}"
    );
    state_machine::apply(
        &mut conn,
        app.project_id,
        job.id,
        Transition::Release { worker: "w-a" },
    )
    .await
    .unwrap();
    let again = claim_observations(&app, "w-b", Duration::from_secs(30)).await;
    assert_eq!(again.attempts, 1, "a released attempt is not counted");
}

#[tokio::test]
async fn an_expired_lease_with_no_attempts_left_fails() {
    let app = spawn_app().await;
    post_turn(&app, "sm-5", "prompt").await;
    sqlx::query("UPDATE generation_jobs SET max_attempts = 1 WHERE project_id = $1")
        .bind(app.project_id)
        .execute(&app.pool)
        .await
        .unwrap();
    claim_observations(&app, "w-dead", Duration::from_millis(1)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let rescued = state_machine::rescue_expired(&app.pool, "rescuer", Duration::ZERO, 10)
        .await
        .unwrap();
    assert_eq!(rescued[0].status, JobStatus::Failed);
    let error: String = sqlx::query_scalar("SELECT last_error FROM generation_jobs WHERE id = $1")
        .bind(rescued[0].id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(error.contains("lease expired"), "{error}");
}

#[tokio::test]
async fn the_schema_refuses_impossible_states() {
    let app = spawn_app().await;
    post_turn(&app, "sm-6", "prompt").await;
    for sql in [
        "UPDATE generation_jobs SET status = 'processing' WHERE project_id = $1",
        "UPDATE generation_jobs SET status = 'completed' WHERE project_id = $1",
        "UPDATE generation_jobs SET status = 'running' WHERE project_id = $1",
        "UPDATE generation_jobs SET attempts = max_attempts + 1 WHERE project_id = $1",
    ] {
        let err = sqlx::query(sql)
            .bind(app.project_id)
            .execute(&app.pool)
            .await
            .unwrap_err();
        let code = err
            .as_database_error()
            .and_then(|e| e.code())
            .map(|c| c.to_string());
        assert_eq!(code.as_deref(), Some("23514"), "{sql}: {err}");
    }
}

#[tokio::test]
async fn a_queued_job_with_no_attempts_left_fails_instead_of_waiting_forever() {
    let app = spawn_app().await;
    post_turn(&app, "sm-7", "prompt").await;
    sqlx::query("UPDATE generation_jobs SET attempts = 2, max_attempts = 2 WHERE project_id = $1")
        .bind(app.project_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let claimed = state_machine::claim(&app.pool, "w", Duration::from_secs(5), ClaimTarget::AnyDue(10))
        .await
        .unwrap();
    assert!(claimed.is_empty(), "an exhausted job is never claimed");
    let failed = state_machine::fail_exhausted(&app.pool, "sweeper", 10)
        .await
        .unwrap();
    assert_eq!(failed.len(), 2);
    let log = transitions(&app, failed[0]).await;
    assert_eq!(log, [(Some("queued".into()), "failed".into(), "sweeper".into())]);
}

#[tokio::test]
async fn a_turns_summary_waits_while_its_observation_job_is_unclaimed() {
    let app = spawn_app().await;
    post_turn(&app, "sm-8", "prompt").await;
    let (observations, summary) = (
        job_id(&app, "observations").await,
        job_id(&app, "turn_summary").await,
    );
    let lease = Duration::from_secs(5);
    // A worker woken for the summary first gets nothing while the turn's
    // observation job (which writes the summary too) waits to be claimed…
    let early = state_machine::claim(&app.pool, "w1", lease, ClaimTarget::Job(summary))
        .await
        .unwrap();
    assert!(
        early.is_empty(),
        "the summary was claimed before its turn's observations"
    );
    // …and a claim of any due job takes the observation job, not the summary.
    let any = state_machine::claim(&app.pool, "w1", lease, ClaimTarget::AnyDue(10))
        .await
        .unwrap();
    assert_eq!(any.iter().map(|j| j.id).collect::<Vec<_>>(), [observations]);
    // Once it is claimed, the summary can be.
    let later = state_machine::claim(&app.pool, "w2", lease, ClaimTarget::Job(summary))
        .await
        .unwrap();
    assert_eq!(later.iter().map(|j| j.id).collect::<Vec<_>>(), [summary]);
}

#[tokio::test]
async fn a_sessions_summary_waits_while_a_job_of_its_turns_is_unclaimed() {
    let app = spawn_app().await;
    post_turn(&app, "sm-9", "prompt").await;
    let (status, res) = app
        .hook(cairn_testkit::cc(
            "sm-9",
            "SessionEnd",
            serde_json::json!({ "reason": "logout" }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");
    let (observations, turn, session) = (
        job_id(&app, "observations").await,
        job_id(&app, "turn_summary").await,
        job_id(&app, "session_summary").await,
    );
    let lease = Duration::from_secs(5);
    let by_id = |job: uuid::Uuid, worker: &'static str| {
        let pool = app.pool.clone();
        async move {
            state_machine::claim(&pool, worker, lease, ClaimTarget::Job(job))
                .await
                .unwrap()
                .into_iter()
                .map(|j| j.id)
                .collect::<Vec<_>>()
        }
    };
    // Woken for the session's summary first: nothing while the turn's jobs
    // wait to be claimed, and any-due takes the observation job alone.
    assert!(
        by_id(session, "w1").await.is_empty(),
        "claimed before the turn's observations"
    );
    let any = state_machine::claim(&app.pool, "w1", lease, ClaimTarget::AnyDue(10))
        .await
        .unwrap();
    assert_eq!(any.iter().map(|j| j.id).collect::<Vec<_>>(), [observations]);
    // The turn's summary job is still queued: the session's summary waits on it too.
    assert!(
        by_id(session, "w2").await.is_empty(),
        "claimed before the turn's summary job"
    );
    assert_eq!(by_id(turn, "w2").await, [turn]);
    assert_eq!(by_id(session, "w3").await, [session]);
}
