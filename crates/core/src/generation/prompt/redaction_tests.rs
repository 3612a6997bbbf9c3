//! Tests that secrets stored in events (before a rule existed, or past an
//! older hook client) reach neither a prompt nor a heuristic observation.

use cairn_shared::jobs::{JobType, state_machine::ClaimedJob};
use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{event, material, user_prompt};
use super::{Budget, build};
use crate::generation::material::{EventRecord, Material};
use crate::generation::provider::heuristic::answer;

const MYSQL_PASSWORD: &str = "Hunter2Secret";
const CURL_PASSWORD: &str = "S3cretPass9";
const NPM_LEGACY_TOKEN: &str = "5f1c2b7e-9c1d-4a1e-9d3b-2f6a8c0e4b11";

fn mysql_command() -> String {
    format!("mysql -u root -p{MYSQL_PASSWORD} shop < dump.sql")
}

/// A hook payload as an older filter stored it: secrets verbatim.
fn raw_mysql_payload() -> Value {
    json!({
        "tool_name": "Bash",
        "tool_input": {"command": mysql_command(), "description": "load the dump"},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": false}
    })
}

fn raw_turn() -> Vec<EventRecord> {
    vec![
        user_prompt(&format!("load dump.sql: mysql -u root -p{MYSQL_PASSWORD} shop")),
        event("PostToolUse", Some("Bash"), raw_mysql_payload()),
        event(
            "PostToolUseFailure",
            Some("Bash"),
            json!({
                "tool_input": {"command": format!("curl -fsS -u admin:{CURL_PASSWORD} https://ci.example.com/api/json")},
                "error": "Exit code 22\ncurl: (22) The requested URL returned error: 401",
                "is_interrupt": false
            }),
        ),
        event(
            "PostToolUse",
            Some("Bash"),
            json!({
                "command": format!("npm config set //registry.npmjs.org/:_authToken {NPM_LEGACY_TOKEN}"),
                "output": format!("set _authToken {NPM_LEGACY_TOKEN}\n//registry.npmjs.org/:_authToken {NPM_LEGACY_TOKEN}")
            }),
        ),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for secret in [MYSQL_PASSWORD, CURL_PASSWORD, NPM_LEGACY_TOKEN] {
        assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
    }
}

#[test]
fn prompts_never_show_a_secret_stored_raw() {
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let user = build(&material(kind, raw_turn()), &Budget::default()).user;
        assert_clean(&format!("{kind:?} prompt"), &user);
        assert!(
            user.contains("mysql -u root -p[REDACTED:cli_password] shop"),
            "{user}"
        );
        assert!(
            user.contains("-u admin:[REDACTED:cli_password] https://"),
            "{user}"
        );
    }
}

#[test]
fn heuristic_answers_never_show_a_secret_stored_raw() {
    for kind in [
        JobType::Observations,
        JobType::TurnSummary,
        JobType::SessionSummary,
    ] {
        let text = answer(&material(kind, raw_turn()));
        assert_clean(&format!("{kind:?} answer"), &text);
        assert!(
            text.contains("`mysql -u root -p[REDACTED:cli_password] shop &lt; dump.sql`"),
            "{text}"
        );
        assert!(text.contains("-u admin:[REDACTED:cli_password]"), "{text}");
    }
}

#[test]
fn redacted_keeps_clean_material_and_filters_the_working_directory() {
    let clean = material(JobType::Observations, super::fixtures::bugfix_turn("fix it"));
    let again = clean.redacted();
    assert_eq!(format!("{:?}", again.events), format!("{:?}", clean.events));
    assert_eq!(again.cwd, clean.cwd);
    let mut odd = clean.clone();
    odd.cwd = Some(format!("/tmp/x MYSQL_PWD={MYSQL_PASSWORD}"));
    assert_eq!(
        odd.redacted().cwd.as_deref(),
        Some("/tmp/x MYSQL_PWD=[REDACTED:env_assignment]")
    );
}

/// The job `cairn_testkit::seed_jobs` left, as a worker would have claimed it.
async fn claimed(pool: &sqlx::PgPool, project_id: Uuid, session_id: Uuid) -> ClaimedJob {
    let (id, team_id, prompt_number): (Uuid, Uuid, Option<i32>) = sqlx::query_as(
        "SELECT id, team_id, prompt_number FROM generation_jobs WHERE project_id = $1 AND session_id = $2",
    )
    .bind(project_id)
    .bind(session_id)
    .fetch_one(pool)
    .await
    .expect("the seeded job");
    ClaimedJob {
        id,
        team_id,
        project_id,
        session_id: Some(session_id),
        job_type: JobType::Observations,
        prompt_number,
        attempts: 1,
        max_attempts: 3,
        lease_expires_at: Utc::now(),
        traceparent: None,
    }
}

/// An event written straight into `agent_events` (no ingest, no filter) is
/// loaded as stored, and still neither the prompt nor the heuristic
/// observation built from it shows the password.
#[tokio::test]
async fn an_event_stored_raw_is_redacted_when_a_job_reads_it() {
    let app = cairn_testkit::spawn_app().await;
    let session_id = cairn_testkit::seed_jobs(&app.pool, app.team_id, app.project_id, 1).await;
    sqlx::query("UPDATE agent_events SET tool_name = 'Bash', payload = $1 WHERE session_id = $2")
        .bind(raw_mysql_payload())
        .bind(session_id)
        .execute(&app.pool)
        .await
        .expect("store the raw payload");
    let job = claimed(&app.pool, app.project_id, session_id).await;
    let loaded: Material = crate::generation::job::load::material(&app.pool, &job)
        .await
        .expect("load the job's material");
    assert_eq!(
        crate::generation::prompt::payload::command(&loaded.events[0]),
        Some(mysql_command().as_str()),
        "the stored payload holds the password"
    );

    let prompt = build(&loaded, &Budget::default());
    assert_clean("prompt", &prompt.user);
    assert!(
        prompt.user.contains("-p[REDACTED:cli_password] shop"),
        "{}",
        prompt.user
    );

    let observation = answer(&loaded);
    assert_clean("observation", &observation);
    assert!(
        observation.contains("<fact>Ran `mysql -u root -p[REDACTED:cli_password] shop &lt; dump.sql`</fact>"),
        "{observation}"
    );
    let parsed = crate::generation::parse::parse(&observation).expect("the heuristic's XML parses");
    assert_eq!(parsed.observations.len(), 1);
}
