//! `cairn hook claude-code` and `cairn spool` against a real cairn-api (over
//! its own Postgres database), run as the built binary in a private home.

#[path = "hook/support.rs"]
mod support;

use std::{
    net::TcpListener,
    time::{Duration, Instant},
};

use cairn_testkit::{TestApp, cc, spawn_app};
use serde_json::{Value, json};
use support::{Client, Relay, closed_port, finish};

const BUDGET: Duration = Duration::from_millis(2_000);
/// Process start and the debug build's filter compile, on top of the budget.
const SLACK: Duration = Duration::from_millis(1_500);

fn tool_event(session: &str, seq: usize) -> Value {
    // No tool_use_id: the server then keys the event by its Idempotency-Key,
    // so a resend under a new key would show as a second row.
    cc(
        session,
        "PostToolUse",
        json!({ "tool_name": "Bash", "seq": seq,
        "tool_input": {"command": format!("echo {seq}")}, "tool_response": {"stdout": ""} }),
    )
}

async fn rows(app: &TestApp, filter: &str) -> i64 {
    app.count(&format!("SELECT count(*) FROM agent_events WHERE {filter}"))
        .await
}

/// Rows whose `seq` equals their rank by id, i.e. stored in order.
async fn rows_in_order(app: &TestApp) -> i64 {
    app.count(
        "SELECT count(*) FROM (SELECT (payload->>'seq')::int AS seq, row_number() OVER (ORDER BY id) - 1 AS rank
           FROM agent_events WHERE event_type = 'PostToolUse') r WHERE seq = rank",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_prints_the_server_context() {
    let app = spawn_app().await;
    let (status, _) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "kind": "decision", "content": "Deploys go through the blue-green pipeline"}),
        )
        .await;
    assert_eq!(status, 201);
    let client = Client::new(&app.base, &app.ingest_token);
    let run = client.hook(&cc("ss-1", "SessionStart", json!({"source": "startup"})));
    assert_eq!(run.code, Some(0));
    let answer: Value = serde_json::from_str(&run.stdout).expect("stdout is the JSON answer only");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("blue-green pipeline"), "{context}");
    assert_eq!(rows(&app, "event_type = 'SessionStart'").await, 1);
    assert!(client.spooled().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windsurf_gets_its_memory_as_a_rules_file_kept_out_of_git_and_prints_nothing() {
    let app = spawn_app().await;
    let (status, _) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "content": "Staging runs on the eu-west cluster"}),
        )
        .await;
    assert_eq!(status, 201);
    let client = Client::new(&app.base, &app.ingest_token);
    // The hook runs in the workspace (a repository) with no cwd in the body.
    std::fs::create_dir_all(client.home().join(".git/info")).unwrap();
    let prompt = json!({"agent_action_name": "pre_user_prompt", "trajectory_id": "traj-1",
                        "execution_id": "ex-1", "tool_info": {"user_prompt": "where is staging?"}});
    let (child, started) = client.spawn_agent_hook("windsurf", &prompt);
    let run = finish(child, started);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), ""),
        "Windsurf reads no stdout"
    );
    let log = std::fs::read_to_string(client.home().join("state/cairn/hook.log")).unwrap_or_default();
    let rules = std::fs::read_to_string(client.home().join(".windsurf/rules/cairn-memory.md"))
        .unwrap_or_else(|e| panic!("{e}; hook.log: {log}"));
    assert!(rules.starts_with("---\ntrigger: always_on\n---\n"), "{rules}");
    assert!(rules.contains("eu-west cluster"), "{rules}");
    let exclude = std::fs::read_to_string(client.home().join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.windsurf/rules/cairn-memory.md"), "{exclude}");
    assert_eq!(
        rows(
            &app,
            "source_adapter = 'windsurf' AND event_type = 'UserPromptSubmit'"
        )
        .await,
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_away_answers_empty_in_budget_then_delivers_once_when_back() {
    let app = spawn_app().await;
    let mut relay = Relay::new(&app.base);
    let client = Client::new(&relay.url(), &app.ingest_token);

    let run = client.hook(&cc("away-1", "SessionStart", json!({"source": "startup"})));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert!(run.elapsed < BUDGET + SLACK, "{:?}", run.elapsed);
    let run = client.hook(&tool_event("away-1", 0));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert_eq!(client.spooled().len(), 2);
    let status = client.cairn(&["spool", "status"]);
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(text.contains("events waiting: 2"), "{text}");
    let log = std::fs::read_to_string(client.home().join("state/cairn/hook.log")).unwrap();
    assert!(log.contains("spooled"), "{log}");

    // Back: the next call replays the backlog first, then sends its own event.
    relay.start();
    let run = client.hook(&tool_event("away-1", 1));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert!(client.spooled().is_empty(), "{}", client.spool_text());
    assert_eq!(rows(&app, "true").await, 3);
    assert_eq!(rows_in_order(&app).await, 2);

    // Away again, then `cairn spool flush` delivers what waits, exactly once.
    relay.stop();
    client.hook(&tool_event("away-1", 2));
    assert_eq!(client.spooled().len(), 1);
    relay.start();
    let out = client.cairn(&["spool", "flush"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("delivered 1"));
    let out = client.cairn(&["spool", "flush"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("delivered 0"));
    assert_eq!(rows(&app, "true").await, 4);
    assert_eq!(rows_in_order(&app).await, 3);
    relay.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_port_and_silent_server_exit_zero_within_budget() {
    let client = Client::new(&format!("http://127.0.0.1:{}", closed_port()), "t");
    let run = client.hook(&cc("c-1", "SessionStart", json!({"source": "startup"})));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert!(run.elapsed < BUDGET + SLACK, "{:?}", run.elapsed);
    assert_eq!(client.spooled().len(), 1);

    // Accepts connections (the kernel does), never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let client = Client::new(&url, "t").with("CAIRN_HOOK_TIMEOUT_MS", "500");
    let run = client.hook(&tool_event("c-2", 0));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert!(
        run.elapsed < Duration::from_millis(500) + SLACK,
        "{:?}",
        run.elapsed
    );
    assert_eq!(client.spooled().len(), 1);
    // With a backlog the budget covers the replay and the event together.
    let run = client.hook(&tool_event("c-2", 1));
    assert!(
        run.elapsed < Duration::from_millis(500) + SLACK,
        "{:?}",
        run.elapsed
    );
    let keys: Vec<_> = client
        .spooled()
        .iter()
        .map(|e| e["body"]["seq"].clone())
        .collect();
    assert_eq!(keys, [json!(0), json!(1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_spooled_events_replay_in_order_once() {
    let app = spawn_app().await;
    let client = Client::new(&app.base, &app.ingest_token);
    let n = 10_000;
    let bodies: Vec<Value> = (0..n).map(|i| tool_event("bulk-1", i)).collect();
    client.write_spool(&bodies, b"");
    let started = Instant::now();
    let out = client.cairn(&["spool", "flush"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("flushed {n} in {:?}", started.elapsed());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("delivered {n}")));
    assert_eq!(rows(&app, "true").await, n as i64);
    assert_eq!(rows_in_order(&app).await, n as i64);
    assert!(client.spooled().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_last_line_loses_nothing_before_it() {
    let app = spawn_app().await;
    let client = Client::new(&app.base, &app.ingest_token);
    let bodies: Vec<Value> = (0..3).map(|i| tool_event("torn-1", i)).collect();
    client.write_spool(
        &bodies,
        br#"{"v":1,"agent":"claude-code","key":"k-torn","at":1,"qu"#,
    );
    let run = client.hook(&tool_event("torn-1", 3));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert_eq!(rows(&app, "true").await, 4);
    assert_eq!(rows_in_order(&app).await, 4);
    assert_eq!(client.spool_text(), "", "the torn remains are gone too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_hooks_lose_nothing() {
    let app = spawn_app().await;
    let mut relay = Relay::new(&app.base);
    let client = Client::new(&relay.url(), &app.ingest_token);
    let children: Vec<_> = (0..16)
        .map(|i| client.spawn_hook(&tool_event("conc-1", i)))
        .collect();
    for (child, started) in children {
        let run = finish(child, started);
        assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    }
    let spooled = client.spooled();
    assert_eq!(spooled.len(), 16, "{}", client.spool_text());
    let mut seqs: Vec<u64> = spooled
        .iter()
        .map(|e| e["body"]["seq"].as_u64().unwrap())
        .collect();
    seqs.sort();
    assert_eq!(seqs, (0..16).collect::<Vec<_>>());

    relay.start();
    let out = client.cairn(&["spool", "flush"]);
    assert!(out.status.success());
    assert_eq!(rows(&app, "true").await, 16);
    assert_eq!(
        rows(&app, "true").await,
        app.count("SELECT count(DISTINCT payload->>'seq') FROM agent_events")
            .await
    );
    relay.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_spool_drops_the_oldest_and_counts_them() {
    let client = Client::new(&format!("http://127.0.0.1:{}", closed_port()), "t")
        .with("CAIRN_SPOOL_MAX_BYTES", "4000");
    let bodies: Vec<Value> = (0..30).map(|i| tool_event("full-1", i)).collect();
    client.write_spool(&bodies, b"");
    let run = client.hook(&tool_event("full-1", 30));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    let size = std::fs::metadata(client.spool_file()).unwrap().len();
    assert!(size <= 4000, "{size}");
    let seqs: Vec<u64> = client
        .spooled()
        .iter()
        .map(|e| e["body"]["seq"].as_u64().unwrap())
        .collect();
    let first = seqs[0];
    assert!(first > 0);
    assert_eq!(
        seqs,
        (first..=30).collect::<Vec<_>>(),
        "the newest kept, in order"
    );
    let status = String::from_utf8(client.cairn(&["spool", "status"]).stdout).unwrap();
    assert!(
        status.contains(&format!("dropped (spool full): {first}")),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_text_and_secrets_reach_neither_server_nor_spool() {
    let key = "sk-ant-api03-Zq7xK2mN9pL4vR8tY1wE5uI3oA6sD0fG";
    let prompt = format!("deploy it <private>zebracorn plan</private> with {key}");
    let body = cc("priv-1", "UserPromptSubmit", json!({ "prompt": prompt }));

    let away = Client::new(&format!("http://127.0.0.1:{}", closed_port()), "t");
    away.hook(&body);
    let spooled = away.spool_text();
    assert!(spooled.contains("deploy it"), "{spooled}");
    assert!(spooled.contains("[REDACTED:anthropic_key]"), "{spooled}");
    assert!(
        !spooled.contains("zebracorn") && !spooled.contains(key),
        "{spooled}"
    );

    let app = spawn_app().await;
    let client = Client::new(&app.base, &app.ingest_token);
    let run = client.hook(&body);
    assert_eq!(run.code, Some(0));
    assert_eq!(rows(&app, "payload->>'prompt' LIKE 'deploy it%'").await, 1);
    assert_eq!(rows(&app, "payload::text LIKE '%zebracorn%'").await, 0);
    assert_eq!(rows(&app, &format!("payload::text LIKE '%{key}%'")).await, 0);
    let anywhere = app
        .count("SELECT count(*) FROM sessions WHERE metadata::text LIKE '%zebracorn%'")
        .await;
    assert_eq!(anywhere, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_without_last_message_reads_the_transcript_tail() {
    let app = spawn_app().await;
    let client = Client::new(&app.base, &app.ingest_token);
    let transcript = client.home().join("transcript.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "fix the build"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Earlier words"}]}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "The build is fixed: the lockfile was stale."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    client.hook(&cc(
        "stop-1",
        "UserPromptSubmit",
        json!({"prompt": "fix the build"}),
    ));
    let mut stop = cc("stop-1", "Stop", json!({"stop_hook_active": false}));
    stop["transcript_path"] = json!(transcript);
    let run = client.hook(&stop);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    let found = rows(
        &app,
        "event_type = 'Stop' AND payload->>'last_assistant_message' = 'The build is fixed: the lockfile was stale.'",
    )
    .await;
    assert_eq!(found, 1);
}

/// One team token for every repository: an event from a directory no rule
/// maps is spooled (not lost), `cairn doctor` says the project is
/// unresolved, and once an admin adds the rule a flush delivers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_token_in_an_unmapped_directory_spools_until_a_rule_exists() {
    let app = spawn_app().await;
    let team_token = app
        .mint(json!({"name": "dev laptop", "scopes": ["ingest", "read"]}))
        .await;
    let client = Client::new(&app.base, &team_token);
    // cc() bodies work in /home/dev/app.
    let run = client.hook(&tool_event("team-1", 0));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "{}\n"));
    assert_eq!(client.spooled().len(), 1, "unresolved is spooled, not dropped");
    assert_eq!(rows(&app, "true").await, 0);

    let doctor = client.cairn(&["doctor"]);
    let text = String::from_utf8(doctor.stdout).unwrap();
    assert!(text.contains("✗ project"), "{text}");

    let (status, res) = app
        .post(
            &format!("/v1/admin/projects/{}/rules", app.project_id),
            Some(&app.admin_token),
            &json!({"kind": "path_prefix", "pattern": "/home/dev/app"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let flush = client.cairn(&["spool", "flush"]);
    assert!(
        flush.status.success(),
        "{}",
        String::from_utf8_lossy(&flush.stderr)
    );
    assert!(client.spooled().is_empty());
    assert_eq!(rows(&app, &format!("project_id = '{}'", app.project_id)).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_tools_result_carries_the_files_hash_to_the_server() {
    let app = spawn_app().await;
    let dir = std::env::temp_dir().join(format!("cairn-hook-hash-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lexer.rs"), b"abc").unwrap();
    let client = Client::new(&app.base, &app.ingest_token);
    let mut start = cc("hash-1", "SessionStart", json!({"source": "startup"}));
    start["cwd"] = json!(dir);
    assert_eq!(client.hook(&start).code, Some(0));
    let mut read = cc(
        "hash-1",
        "PostToolUse",
        json!({ "tool_name": "Read", "tool_use_id": "toolu_hash_1",
                "tool_input": { "file_path": dir.join("src/lexer.rs") },
                "tool_response": { "file": { "content": "abc" } } }),
    );
    read["cwd"] = json!(dir);
    assert_eq!(client.hook(&read).code, Some(0));
    let versions: Vec<(String, String)> = sqlx::query_as("SELECT path, hash FROM file_versions")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    // SHA-256("abc"), under the path relative to the session's directory.
    assert_eq!(
        versions,
        vec![(
            "src/lexer.rs".to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_string()
        )]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_sends_the_worktrees_changed_files_and_gets_their_memories_first() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    for f in ["src/retry.rs", "src/other.rs"] {
        std::fs::write(dir.path().join(f), "fn main() {}\n").unwrap();
    }
    git(&["add", "."]);
    git(&["commit", "-qm", "init"]);
    git(&["update-index", "--really-refresh"]);
    // An old memory of the file now being changed, then newer routine ones.
    let session = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, cwd)
         VALUES ($1, $2, $3, 'claude-code', $1::text, '/elsewhere')",
    )
    .bind(session)
    .bind(app.team_id)
    .bind(app.project_id)
    .execute(&app.pool)
    .await
    .unwrap();
    for (title, file, minutes) in [("Retry jitter capped at 2 s", "src/retry.rs", 9_000)]
        .into_iter()
        .chain((0..10).map(|_| ("Routine note", "src/other.rs", 1)))
    {
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title,
                 narrative, files_modified, provider, model, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 'test:' || $1, 'change', $5, 'n', ARRAY[$6], 'heuristic', 'none',
                     now() - $7 * interval '1 minute', now())",
        )
        .bind(uuid::Uuid::now_v7())
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(session)
        .bind(title)
        .bind(file)
        .bind(minutes)
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let client = Client::new(&app.base, &app.ingest_token);
    let start = |id: &str| {
        let mut body = cc(id, "SessionStart", json!({"source": "startup"}));
        body["cwd"] = json!(dir.path());
        let run = client.hook(&body);
        assert_eq!(run.code, Some(0));
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        context
            .split("## In detail")
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    let clean = start("changed-clean");
    assert!(!clean.contains("Retry jitter"), "{clean}");
    std::fs::write(dir.path().join("src/retry.rs"), "fn main() { retry(); }\n").unwrap();
    let changed = start("changed-dirty");
    assert!(changed.contains("Retry jitter capped at 2 s"), "{changed}");
}
