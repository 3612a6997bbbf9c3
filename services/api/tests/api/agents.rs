//! Every agent's hook adapter: a session in each agent's documented shape
//! (tests/fixtures/hooks/<agent>.json) lands as the same normalised session,
//! turn, events and jobs as Claude Code's, and each event gets the agent's
//! own answer; memory comes back in each agent's format.

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

const PROMPT: &str = "Why does the login test fail?";
const FINAL: &str = "The login test failed because tokens expired after 5 minutes; I raised the expiry to 30 minutes in src/auth/login.rs.";

fn fixture(agent: &str) -> Value {
    let path = format!("{}/tests/fixtures/hooks/{agent}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Cursor fires two families of tool events; `cairn install cursor`
/// registers the generic one (`postToolUse`, with a tool-call id) only.
fn installed(agent: &str, body: &Value) -> bool {
    let event = body["hook_event_name"].as_str().unwrap_or_default();
    !(agent == "cursor"
        && matches!(
            event,
            "beforeReadFile" | "beforeShellExecution" | "afterShellExecution" | "afterFileEdit"
        ))
}

/// Posts the fixture's events, checking each answer; returns the session id.
async fn replay(app: &TestApp, agent: &str) -> uuid::Uuid {
    let fixture = fixture(agent);
    for step in fixture["events"].as_array().unwrap() {
        let body = &step["body"];
        if !installed(agent, body) {
            continue;
        }
        let (status, answer) = app
            .post(
                &format!("/v1/hooks/{agent}?cwd=/home/dev/acme-api"),
                Some(&app.ingest_token),
                body,
            )
            .await;
        assert_eq!(status, 200, "{agent} {body}: {answer}");
        let expected = &step["expect"]["answer"];
        // `null` in a fixture: the agent reads no stdout (Windsurf); the
        // server's answer is then for `cairn hook` alone and holds no decision.
        if step["expect"]["kind"] == "session_start" {
            // The fixture's answer is the one without memory; an empty
            // project still says so in the agent's context field.
            let context = answer["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .or(answer["additional_context"].as_str());
            assert!(context.unwrap().contains("<cairn-context>"), "{agent}: {answer}");
        } else if expected.is_null() {
            assert!(
                answer.as_object().unwrap().keys().all(|k| k == "memoryMarkdown"),
                "{agent}: {answer}"
            );
        } else {
            assert_eq!(&answer, expected, "{agent} {}", body);
        }
    }
    let sessions: Vec<(uuid::Uuid, String, i32)> =
        sqlx::query_as("SELECT id, agent, prompt_counter FROM sessions")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(sessions.len(), 1, "{agent}: one session");
    assert_eq!(
        (sessions[0].1.as_str(), sessions[0].2),
        (agent, 1),
        "{agent}: one turn"
    );
    sessions[0].0
}

/// What a stored session looks like, agent-independently.
#[derive(Debug, PartialEq)]
struct Shape {
    prompt: String,
    /// (tool, file touched), in order, of the turn's completed tool calls.
    tools: Vec<(String, Option<String>)>,
    final_message: bool,
    jobs: Vec<(String, Option<i32>)>,
}

#[derive(sqlx::FromRow)]
struct StoredEvent {
    event_type: String,
    prompt_number: Option<i32>,
    tool_name: Option<String>,
    payload: Value,
    source_adapter: String,
}

async fn shape(app: &TestApp, session: uuid::Uuid, agent: &str) -> Shape {
    let events: Vec<StoredEvent> = sqlx::query_as(
        "SELECT event_type, prompt_number, tool_name, payload, source_adapter
         FROM agent_events WHERE session_id = $1 ORDER BY id",
    )
    .bind(session)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert!(
        events.iter().all(|e| e.source_adapter == agent),
        "{agent}: source_adapter"
    );
    let prompt = events
        .iter()
        .find(|e| e.event_type == "UserPromptSubmit")
        .map(|e| {
            assert_eq!(e.prompt_number, Some(1));
            e.payload["prompt"].as_str().unwrap().to_string()
        })
        .unwrap_or_default();
    let tools = events
        .iter()
        .filter(|e| e.event_type == "PostToolUse" || e.event_type == "PostToolUseFailure")
        .map(|e| {
            assert_eq!(e.prompt_number, Some(1), "{agent}: tool events in turn 1");
            let file = e.payload["tool_input"]["file_path"].as_str().map(|f| {
                // Agents report paths relative or absolute.
                f.trim_start_matches("/home/dev/acme-api/").to_string()
            });
            (e.tool_name.clone().unwrap(), file)
        })
        .collect();
    let final_message = events
        .iter()
        .any(|e| e.prompt_number == Some(1) && e.payload["last_assistant_message"].as_str() == Some(FINAL));
    let jobs = sqlx::query_as(
        "SELECT job_type, prompt_number FROM generation_jobs WHERE session_id = $1
         ORDER BY job_type, prompt_number",
    )
    .bind(session)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    Shape {
        prompt,
        tools,
        final_message,
        jobs,
    }
}

fn job(kind: &str) -> (String, Option<i32>) {
    (kind.to_string(), Some(1))
}

/// The Claude Code session every other agent is compared with.
async fn claude_code_shape() -> Shape {
    let app = spawn_app().await;
    let session = replay(&app, "claude-code").await;
    shape(&app, session, "claude-code").await
}

#[tokio::test]
async fn claude_code_fixture_is_one_turn_with_three_tools_and_its_summaries() {
    let reference = claude_code_shape().await;
    assert_eq!(reference.prompt, PROMPT);
    let tools: Vec<&str> = reference.tools.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(tools, ["Read", "Bash", "Edit"]);
    assert_eq!(reference.tools[2].1.as_deref(), Some("src/auth/login.rs"));
    assert!(reference.final_message);
    assert_eq!(
        reference.jobs,
        [job("observations"), job("session_summary"), job("turn_summary")]
    );
}

#[tokio::test]
async fn cursor_session_normalises_like_claude_code() {
    let app = spawn_app().await;
    let session = replay(&app, "cursor").await;
    assert_eq!(shape(&app, session, "cursor").await, claude_code_shape().await);
}

#[tokio::test]
async fn gemini_session_normalises_like_claude_code() {
    let app = spawn_app().await;
    let session = replay(&app, "gemini").await;
    let gemini = shape(&app, session, "gemini").await;
    let reference = claude_code_shape().await;
    // Gemini CLI reports a failed command as an ordinary AfterTool.
    let relaxed = |s: &Shape| {
        s.tools
            .iter()
            .map(|(t, f)| (t.clone(), f.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(relaxed(&gemini), relaxed(&reference));
    assert_eq!(
        (gemini.prompt, gemini.final_message, gemini.jobs),
        (reference.prompt, reference.final_message, reference.jobs)
    );
}

#[tokio::test]
async fn codex_session_normalises_like_claude_code_but_reads_through_the_shell() {
    let app = spawn_app().await;
    let session = replay(&app, "codex").await;
    let codex = shape(&app, session, "codex").await;
    assert_eq!(codex.prompt, PROMPT);
    assert!(codex.final_message);
    let tools: Vec<&str> = codex.tools.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(tools, ["Bash", "Bash", "Edit"]);
    // The patch's file becomes the edit's file_path.
    assert_eq!(codex.tools[2].1.as_deref(), Some("src/auth/login.rs"));
    // Codex has no SessionEnd hook: no session summary until one comes.
    assert_eq!(codex.jobs, [job("observations"), job("turn_summary")]);
}

#[tokio::test]
async fn windsurf_trajectory_normalises_like_claude_code_without_session_events() {
    let app = spawn_app().await;
    let session = replay(&app, "windsurf").await;
    let windsurf = shape(&app, session, "windsurf").await;
    let reference = claude_code_shape().await;
    assert_eq!(
        windsurf.tools.iter().map(|t| &t.0).collect::<Vec<_>>(),
        reference.tools.iter().map(|t| &t.0).collect::<Vec<_>>()
    );
    assert_eq!(
        (&windsurf.prompt, windsurf.final_message),
        (&reference.prompt, true)
    );
    assert_eq!(windsurf.jobs, [job("observations"), job("turn_summary")]);
}

/// Seeds a memory, then asks each agent's context moment for it.
#[tokio::test]
async fn each_agent_gets_memory_in_its_own_format() {
    let app = spawn_app().await;
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.admin_token),
            &json!({"projectId": app.project_id, "content": "Login tokens expire after 30 minutes (zebra-42)."}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let hook = |agent: &'static str, body: Value| {
        let app = &app;
        async move {
            let (status, answer) = app
                .post(&format!("/v1/hooks/{agent}"), Some(&app.ingest_token), &body)
                .await;
            assert_eq!(status, 200, "{agent}: {answer}");
            answer
        }
    };
    let cc = hook(
        "claude-code",
        json!({"session_id": "c1", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/r"}),
    )
    .await;
    assert!(
        cc["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("zebra-42")
    );
    let codex = hook(
        "codex",
        json!({"session_id": "x1", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/r"}),
    )
    .await;
    assert_eq!(codex["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(
        codex["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("zebra-42")
    );
    let gemini = hook(
        "gemini",
        json!({"session_id": "g1", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/r"}),
    )
    .await;
    assert!(
        gemini["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("zebra-42")
    );
    let cursor = hook(
        "cursor",
        json!({"conversation_id": "k1", "hook_event_name": "sessionStart", "workspace_roots": ["/r"]}),
    )
    .await;
    assert!(
        cursor["additional_context"]
            .as_str()
            .unwrap()
            .contains("zebra-42")
    );
    let windsurf = hook(
        "windsurf",
        json!({"agent_action_name": "pre_user_prompt", "trajectory_id": "w1", "execution_id": "e1",
               "tool_info": {"user_prompt": "hello"}}),
    )
    .await;
    let rules = windsurf["memoryMarkdown"].as_str().unwrap();
    assert!(rules.contains("zebra-42"));
    assert!(rules.len() <= 6_000, "Windsurf reads 6,000 characters of a rule");
    // Events that take no context answer without it.
    let stop = hook(
        "cursor",
        json!({"conversation_id": "k1", "hook_event_name": "stop", "status": "completed"}),
    )
    .await;
    assert_eq!(stop, json!({}));
}

#[tokio::test]
async fn unknown_events_are_stored_and_answered_empty_and_bad_bodies_are_4xx() {
    let app = spawn_app().await;
    for (agent, body) in [
        (
            "cursor",
            json!({"conversation_id": "k", "hook_event_name": "afterAgentThought", "text": "hm"}),
        ),
        (
            "gemini",
            json!({"session_id": "g", "hook_event_name": "BeforeModel"}),
        ),
        (
            "codex",
            json!({"session_id": "x", "hook_event_name": "PostCompact"}),
        ),
        (
            "windsurf",
            json!({"agent_action_name": "post_setup_worktree", "trajectory_id": "w"}),
        ),
    ] {
        let (status, answer) = app
            .post(&format!("/v1/hooks/{agent}"), Some(&app.ingest_token), &body)
            .await;
        assert_eq!((status, answer), (200, json!({})), "{agent}");
    }
    assert_eq!(app.count("SELECT count(*) FROM agent_events").await, 4);
    for (agent, body, code) in [
        ("cursor", json!({"hook_event_name": "stop"}), "missing_field"),
        (
            "gemini",
            json!({"session_id": "g", "hook_event_name": "BeforeAgent"}),
            "missing_field",
        ),
        (
            "windsurf",
            json!({"agent_action_name": "pre_user_prompt", "trajectory_id": "w", "tool_info": 5}),
            "invalid_field",
        ),
        (
            "codex",
            json!({"session_id": 7, "hook_event_name": "Stop"}),
            "invalid_field",
        ),
    ] {
        let (status, answer) = app
            .post(&format!("/v1/hooks/{agent}"), Some(&app.ingest_token), &body)
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (422, Some(code)),
            "{agent}: {answer}"
        );
    }
    let (status, answer) = app
        .post("/v1/hooks/vim", Some(&app.ingest_token), &json!({}))
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (404, Some("unknown_agent"))
    );
}
