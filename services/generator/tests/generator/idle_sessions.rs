//! Unclean exits: a session whose agent never sent SessionEnd is ended by
//! the sweeper once it has been idle long enough, exactly once and
//! summarised exactly once, however many generators sweep at the same time;
//! a session with recent activity is left alone.

use std::time::Duration;

use cairn_core::sessions::end::end_idle;
use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::{Value, json};
use uuid::Uuid;

use super::support::{MINUTE, start, wait_count};

const HOUR: Duration = Duration::from_secs(3600);

/// A turn that never ends: a prompt and a tool call, no Stop, no SessionEnd.
async fn open_turn(app: &TestApp, session: &str) {
    for body in [
        cc(session, "SessionStart", json!({ "source": "startup" })),
        cc(
            session,
            "UserPromptSubmit",
            json!({ "prompt": "make the lexer keep spans" }),
        ),
        cc(
            session,
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "src/lexer.rs", "old_string": "a", "new_string": "b" },
                    "tool_response": { "ok": true } }),
        ),
    ] {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
}

/// The session's timeline, as the dashboard reads it.
async fn timeline(app: &TestApp, external: &str) -> Value {
    let id: Uuid = sqlx::query_scalar("SELECT id FROM sessions WHERE external_session_id = $1")
        .bind(external)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let (status, body) = app
        .get(&format!("/v1/sessions/{id}/timeline"), Some(&app.admin_token))
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn session(app: &TestApp, external: &str) -> (String, Value) {
    sqlx::query_as("SELECT status, metadata FROM sessions WHERE external_session_id = $1")
        .bind(external)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_idle_session_is_ended_once_and_summarised_once() {
    let app = spawn_app().await;
    open_turn(&app, "s-crashed").await;
    open_turn(&app, "s-working").await;
    // The crashed agent's last event was two hours ago.
    sqlx::query(
        "UPDATE sessions SET updated_at = now() - interval '2 hours' WHERE external_session_id = 's-crashed'",
    )
    .execute(&app.pool)
    .await
    .unwrap();

    // Two generators sweep at once, then again.
    let (a, b) = tokio::join!(end_idle(&app.pool, HOUR), end_idle(&app.pool, HOUR));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.sessions + b.sessions, 1, "{a:?} {b:?}");
    assert_eq!(a.summaries + b.summaries, 1, "{a:?} {b:?}");
    assert_eq!(
        a.sealed_jobs + b.sealed_jobs,
        1,
        "the open turn's job is made due: {a:?} {b:?}"
    );
    assert_eq!(
        end_idle(&app.pool, HOUR).await.unwrap().sessions,
        0,
        "a second sweep ends nothing"
    );

    let (status, metadata) = session(&app, "s-crashed").await;
    assert_eq!(status, "ended");
    assert_eq!(metadata["ended_by"], "sweeper", "{metadata}");
    assert!(metadata["last_activity_at"].is_string(), "{metadata}");
    let (status, metadata) = session(&app, "s-working").await;
    assert_eq!(status, "active", "recent activity keeps a session open");
    assert!(metadata.get("ended_by").is_none());

    // A generator then writes the turn's observations and one session summary.
    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM summaries su JOIN sessions s ON s.id = su.session_id
         WHERE s.external_session_id = 's-crashed' AND su.scope = 'session'",
        1,
        MINUTE,
    )
    .await;
    // The generator's own sweeps (every minute by default) change nothing more.
    assert_eq!(end_idle(&app.pool, HOUR).await.unwrap(), Default::default());
    generator.stop().await;
    let summaries = app
        .count(
            "SELECT count(*) FROM summaries su JOIN sessions s ON s.id = su.session_id
             WHERE s.external_session_id = 's-crashed' AND su.scope = 'session'",
        )
        .await;
    assert_eq!(summaries, 1);
    let jobs = app
        .count(
            "SELECT count(*) FROM generation_jobs j JOIN sessions s ON s.id = j.session_id
             WHERE s.external_session_id = 's-crashed' AND j.job_type = 'session_summary'",
        )
        .await;
    assert_eq!(jobs, 1);
}

#[tokio::test]
async fn an_event_after_the_sweeper_ended_its_session_joins_the_latest_turn() {
    let app = spawn_app().await;
    open_turn(&app, "s-late").await;
    sqlx::query(
        "UPDATE sessions SET updated_at = now() - interval '2 hours' WHERE external_session_id = 's-late'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    assert_eq!(end_idle(&app.pool, HOUR).await.unwrap().sessions, 1);

    // The agent was only idle: a tool call arrives without a new prompt.
    let (status, res) = app
        .hook(cc(
            "s-late",
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "src/parser.rs", "old_string": "a", "new_string": "b" },
                    "tool_response": { "ok": true } }),
        ))
        .await;
    assert_eq!(status, 200, "{res}");
    // It is the session's latest turn's (1), in a job of its own, made due by the turn's idle deadline.
    let (turn, jobs): (Option<i32>, i64) = sqlx::query_as(
        "SELECT e.prompt_number, (SELECT count(*) FROM generation_jobs j WHERE j.session_id = e.session_id
                                  AND j.job_type = 'observations' AND j.prompt_number = 1)
         FROM agent_events e JOIN sessions s ON s.id = e.session_id
         WHERE s.external_session_id = 's-late' AND e.payload -> 'tool_input' ->> 'file_path' = 'src/parser.rs'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        (turn, jobs),
        (Some(1), 2),
        "attached to turn 1, beside the job the sweeper sealed"
    );
    let (status, metadata) = session(&app, "s-late").await;
    assert_eq!(
        (status.as_str(), &metadata["ended_by"]),
        ("ended", &json!("sweeper"))
    );
    // The session's history says so: ended by the sweeper, the late event after its end.
    let timeline = timeline(&app, "s-late").await;
    assert_eq!(timeline["session"]["endedBy"], "sweeper", "{timeline}");
    let turn = timeline["turns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["promptNumber"] == 1);
    let events = turn.unwrap()["events"].as_array().unwrap();
    let late: Vec<bool> = events.iter().map(|e| e["afterEnd"].as_bool().unwrap()).collect();
    assert_eq!(late.last(), Some(&true), "{timeline}");
    assert_eq!(late.iter().filter(|l| **l).count(), 1, "{timeline}");

    // The turn's idle deadline (the API's `CAIRN_TURN_IDLE_MS`, 2 minutes) passes.
    sqlx::query(
        "UPDATE generation_jobs SET next_attempt_at = now() WHERE status = 'queued' AND NOT sealed
           AND session_id = (SELECT id FROM sessions WHERE external_session_id = 's-late')",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.external_session_id = 's-late' AND 'src/parser.rs' = ANY(o.files_modified) AND o.prompt_number = 1",
        1,
        MINUTE,
    )
    .await;
    generator.stop().await;
    let summaries = app
        .count(
            "SELECT count(*) FROM generation_jobs j JOIN sessions s ON s.id = j.session_id
             WHERE s.external_session_id = 's-late' AND j.job_type = 'session_summary'",
        )
        .await;
    assert_eq!(summaries, 1, "still summarised once");
}

/// Work that came without any prompt (the agent died before its prompt was
/// recorded) is a recovery turn: the sweeper seals it, the generator writes
/// its observations, and the history labels it.
#[tokio::test]
async fn work_without_a_prompt_is_generated_as_a_recovery_turn() {
    let app = spawn_app().await;
    for body in [
        cc("s-promptless", "SessionStart", json!({ "source": "startup" })),
        cc(
            "s-promptless",
            "PostToolUse",
            json!({ "tool_name": "Edit", "tool_use_id": Uuid::new_v4().to_string(),
                    "tool_input": { "file_path": "src/main.rs", "old_string": "a", "new_string": "b" },
                    "tool_response": { "ok": true } }),
        ),
    ] {
        let (status, res) = app.hook(body).await;
        assert_eq!(status, 200, "{res}");
    }
    sqlx::query(
        "UPDATE sessions SET updated_at = now() - interval '2 hours' WHERE external_session_id = 's-promptless'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let ended = end_idle(&app.pool, HOUR).await.unwrap();
    assert_eq!((ended.sessions, ended.sealed_jobs), (1, 1), "{ended:?}");
    let generator = start(&app, &[]);
    wait_count(
        &app.pool,
        "SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.external_session_id = 's-promptless' AND 'src/main.rs' = ANY(o.files_modified)",
        1,
        MINUTE,
    )
    .await;
    generator.stop().await;
    let timeline = timeline(&app, "s-promptless").await;
    let turns = timeline["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{timeline}");
    assert_eq!(turns[0]["promptNumber"], 0, "{timeline}");
    assert_eq!(turns[0]["recovery"], true, "{timeline}");
    assert!(
        !turns[0]["observations"].as_array().unwrap().is_empty(),
        "{timeline}"
    );
}
