//! Two generator processes with 8 workers each race over 1,000 jobs: each
//! job completes exactly once and no observation is written twice.

use std::time::Duration;

use cairn_testkit::{seed_jobs, spawn_app};

use super::support::{spawn_process, wait_count};

#[tokio::test]
async fn two_processes_complete_each_of_1000_jobs_exactly_once() {
    let app = spawn_app().await;
    seed_jobs(&app.pool, app.team_id, app.project_id, 1000).await;
    let settings = [("CAIRN_WORKERS", "8"), ("CAIRN_DATABASE_MAX_CONNECTIONS", "12")];
    let a = spawn_process(&app, &[settings[0], settings[1], ("CAIRN_WORKER_ID", "proc-a")]);
    let b = spawn_process(&app, &[settings[0], settings[1], ("CAIRN_WORKER_ID", "proc-b")]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM generation_jobs WHERE status = 'completed'",
        1000,
        Duration::from_secs(180),
    )
    .await;
    drop((a, b));

    let twice = app
        .count(
            "SELECT count(*) FROM (SELECT job_id FROM generation_job_events WHERE to_status = 'completed'
                                   GROUP BY job_id HAVING count(*) <> 1) d",
        )
        .await;
    assert_eq!(twice, 0, "no job completed twice");
    assert_eq!(
        app.count("SELECT count(*) FROM generation_job_events WHERE to_status = 'completed'")
            .await,
        1000
    );
    assert_eq!(app.count("SELECT count(*) FROM observations").await, 1000);
    assert_eq!(
        app.count("SELECT count(DISTINCT job_id) FROM observations").await,
        1000
    );
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE attempts <> 1")
            .await,
        0,
        "no claim was lost"
    );
    for process in ["proc-a", "proc-b"] {
        let done = app
            .count(&format!(
                "SELECT count(*) FROM generation_job_events WHERE to_status = 'completed' AND actor LIKE '{process}:%'"
            ))
            .await;
        assert!(done > 0, "{process} took part in the race");
    }
}
