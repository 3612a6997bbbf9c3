//! `memoryVisibility: private-first`: a member's memories and raw prompts
//! reach that member (and admins) only, over every read route — hooks'
//! SessionStart, prompt and file memories, search, context, timeline,
//! observations by id, ask, MCP, sessions, events, the memory digest and
//! the live stream's titles — until promoted (by the author, a reviewer or
//! the project's rule); promotion and rejection are audited and reversible.

use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, ClientConfig},
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

/// The word the readers search for (it is in their queries too).
const SECRET_WORD: &str = "ZEBRAQUUX";
/// Words only her prompt and her memories hold: never in a reader's query.
const HER_PROMPT: &str = "PRIVPROMPTSEVENQ";
const HER_FINDING: &str = "KUMQUATLOCK";

/// Alice's session: a prompt naming the word, a read of a file, a stop.
async fn alice_works(app: &TestApp, token: &str) -> (String, Vec<Uuid>) {
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    for body in [
        cc("s-alice", "SessionStart", json!({"source": "startup"})),
        cc(
            "s-alice",
            "UserPromptSubmit",
            json!({"prompt": format!("Why does the {SECRET_WORD} deploy fail? {HER_PROMPT}")}),
        ),
        cc(
            "s-alice",
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": "t-1",
            "tool_input": {"file_path": "/home/dev/app/src/zebra.rs"},
            "tool_response": {"content": format!("// {SECRET_WORD} config")}}),
        ),
        cc(
            "s-alice",
            "Stop",
            json!({"last_assistant_message":
            format!("The {SECRET_WORD} deploy failed: src/zebra.rs read the {HER_FINDING} key, stale.")}),
        ),
        cc("s-alice", "SessionEnd", json!({"reason": "exit"})),
    ] {
        let (status, res) = app.post(&path, Some(token), &body).await;
        assert_eq!(status, 200, "{res}");
    }
    let done = app.generate().await;
    assert!(done.rows >= 2, "{done:?}");
    let ids: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM observations ORDER BY created_at")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    let session: String =
        sqlx::query_scalar("SELECT id::text FROM sessions WHERE external_session_id = 's-alice'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    (session, ids)
}

/// Calls MCP `tools` in turn as `token`: the text of each answer, and
/// whether any was a tool error.
async fn mcp(app: &TestApp, token: &str, calls: &[(&str, serde_json::Value)]) -> (String, bool) {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/v1/mcp", app.base)).auth_header(token);
    let client = ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP initialize");
    let (mut text, mut error) = (String::new(), false);
    for (tool, args) in calls {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = args.as_object().cloned();
        let result = client.call_tool(params).await.expect("tools/call");
        error |= result.is_error == Some(true);
        for c in &result.content {
            if let Some(t) = c.as_text() {
                text.push_str(&t.text);
            }
        }
    }
    client.cancel().await.ok();
    (text, error)
}

async fn mcp_search(app: &TestApp, token: &str) -> String {
    let project = app.project_id.to_string();
    let calls = [
        ("search", json!({"query": SECRET_WORD, "project": project})),
        ("context", json!({"query": SECRET_WORD, "project": project})),
        (
            "ask",
            json!({"question": format!("why did {SECRET_WORD} fail"), "project": project}),
        ),
    ];
    mcp(app, token, &calls).await.0
}

/// Everything `token` can read of the project, by every route, as one text.
async fn everything_seen(app: &TestApp, token: &str, session: &str, ids: &[Uuid]) -> String {
    let p = app.project_id;
    let hook = format!("/v1/hooks/claude-code?project={p}");
    let t = Some(token);
    let mut seen = vec![];
    for body in [
        cc("s-reader", "SessionStart", json!({"source": "startup"})),
        cc(
            "s-reader",
            "UserPromptSubmit",
            json!({"prompt": format!("{SECRET_WORD} deploy failure")}),
        ),
        cc(
            "s-reader",
            "PreToolUse",
            json!({"tool_name": "Read", "tool_use_id": "t-r",
            "tool_input": {"file_path": "/home/dev/app/src/zebra.rs"}}),
        ),
    ] {
        let (status, res) = app.post(&hook, t, &body).await;
        assert_eq!(status, 200, "{res}");
        seen.push(res.to_string());
    }
    let joined: Vec<String> = ids.iter().map(Uuid::to_string).collect();
    for path in [
        format!("/v1/search?projectId={p}&query={SECRET_WORD}"),
        format!("/v1/search?projectId={p}&query={SECRET_WORD}&mode=fulltext"),
        format!("/v1/search?projectId={p}&query=deploy&orderBy=newest"),
        format!("/v1/projects/{p}/context?query={SECRET_WORD}"),
        format!("/v1/projects/{p}/context"),
        format!("/v1/timeline?projectId={p}&query={SECRET_WORD}"),
        format!("/v1/timeline?projectId={p}&anchor={}", ids[0]),
        format!("/v1/observations?projectId={p}&ids={}", joined.join(",")),
        format!("/v1/sessions?projectId={p}"),
        format!("/v1/sessions/{session}/timeline"),
        format!("/v1/projects/{p}/memory-digest"),
    ] {
        let (_, res) = app.get(&path, t).await;
        seen.push(res.to_string());
    }
    for (path, body) in [
        ("/v1/context", json!({"projectId": p, "query": SECRET_WORD})),
        ("/v1/search", json!({"projectId": p, "query": SECRET_WORD})),
        (
            "/v1/ask",
            json!({"projectId": p, "question": format!("why did {SECRET_WORD} fail")}),
        ),
    ] {
        let (_, res) = app.post(path, t, &body).await;
        seen.push(res.to_string());
    }
    let events: Vec<Uuid> = sqlx::query_scalar("SELECT e.id FROM agent_events e JOIN sessions s ON s.id = e.session_id WHERE s.external_session_id = 's-alice'")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    for event in events {
        let (_, res) = app.get(&format!("/v1/events/{event}"), t).await;
        seen.push(res.to_string());
        let (_, res) = app.get(&format!("/v1/events/{event}/observations"), t).await;
        seen.push(res.to_string());
    }
    seen.push(mcp_search(app, token).await);
    seen.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_memory_is_theirs_until_promoted_on_every_read_route() {
    let app = spawn_app().await;
    app.private_first().await;
    let (alice_id, alice) = app.member_token("alice@acme.test").await;
    let (_, bob) = app.member_token("bob@acme.test").await;
    let service = app
        .mint(json!({"name": "ci", "scopes": ["read", "ingest"], "projectId": app.project_id}))
        .await;
    let (session, ids) = alice_works(&app, &alice).await;
    let private: i64 = app
        .count(&format!(
            "SELECT count(*) FROM observations WHERE visibility = 'private' AND member_id = '{alice_id}'"
        ))
        .await;
    assert_eq!(
        private as usize,
        ids.len(),
        "every memory of her session starts private"
    );

    for (who, token) in [("bob", &bob), ("a service token", &service)] {
        let seen = everything_seen(&app, token, &session, &ids).await;
        for hers in [HER_PROMPT, HER_FINDING] {
            assert!(
                !seen.contains(hers),
                "{who} saw her unpromoted memory or prompt ({hers}):\n{seen}"
            );
        }
    }
    // Her own agent has it at once, and so does an admin (the reviewer).
    for (who, token) in [("alice", &alice), ("an admin", &app.admin_token)] {
        let seen = everything_seen(&app, token, &session, &ids).await;
        assert!(
            seen.contains(HER_PROMPT) && seen.matches(HER_FINDING).count() > 5,
            "{who} should see it:\n{seen}"
        );
    }
    let (_, start) = app
        .post(
            &format!("/v1/hooks/claude-code?project={}", app.project_id),
            Some(&alice),
            &cc("s-alice-2", "SessionStart", json!({"source": "startup"})),
        )
        .await;
    assert!(
        start.to_string().contains(HER_FINDING),
        "her next session starts with it: {start}"
    );
    let (_, queue) = app
        .get(
            &format!("/v1/review?projectId={}", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(queue["memories"].as_array().unwrap().len(), ids.len(), "{queue}");

    // Feedback on her memory is hers (and an admin's) while it is private:
    // Bob can neither mark it nor read its marks, over HTTP or MCP.
    let feedback = format!("/v1/memories/{}/feedback", ids[0]);
    let (status, res) = app
        .post(
            &feedback,
            Some(&alice),
            &json!({"verdict": "helpful", "note": HER_FINDING}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    for token in [&bob, &service] {
        let (status, res) = app
            .post(&feedback, Some(token), &json!({"verdict": "misleading"}))
            .await;
        assert_eq!(status, 404, "{res}");
        let (status, res) = app.get(&feedback, Some(token)).await;
        assert_eq!(status, 404, "{res}");
        assert!(!res.to_string().contains(HER_FINDING), "{res}");
    }
    let mark = [(
        "feedback",
        json!({"id": ids[0].to_string(), "verdict": "misleading"}),
    )];
    let (answer, error) = mcp(&app, &bob, &mark).await;
    assert!(error && answer.contains("not_found"), "{answer}");
    for token in [&alice, &app.admin_token] {
        let (status, res) = app.get(&feedback, Some(token)).await;
        assert_eq!(status, 200, "{res}");
        assert_eq!(
            (res["helpful"].as_i64(), res["misleading"].as_i64()),
            (Some(1), Some(0)),
            "{res}"
        );
        assert_eq!(res["marks"][0]["note"], HER_FINDING, "{res}");
    }

    // Bob cannot promote her memory (over HTTP or MCP); she can, from her
    // agent (MCP `share`) or her laptop's token.
    let (status, _) = app
        .post(
            &format!("/v1/memories/{}/promote", ids[0]),
            Some(&bob),
            &json!({}),
        )
        .await;
    assert_eq!(status, 404);
    let share = [("share", json!({"id": ids[0].to_string()}))];
    let (answer, error) = mcp(&app, &bob, &share).await;
    assert!(error && answer.contains("memory_not_found"), "{answer}");
    let (answer, error) = mcp(&app, &alice, &share).await;
    assert!(!error && answer.starts_with("Shared with the team"), "{answer}");
    for id in &ids[1..] {
        let (status, res) = app
            .post(&format!("/v1/memories/{id}/promote"), Some(&alice), &json!({}))
            .await;
        assert_eq!(status, 200, "{res}");
        assert_eq!(res["memory"]["visibility"], "team");
    }
    let (_, found) = app
        .get(
            &format!(
                "/v1/search?projectId={}&query={SECRET_WORD}&mode=fulltext",
                app.project_id
            ),
            Some(&bob),
        )
        .await;
    assert!(
        found.to_string().contains(&ids[0].to_string()),
        "promoted, the team finds it: {found}"
    );
    let (_, start) = app
        .post(
            &format!("/v1/hooks/claude-code?project={}", app.project_id),
            Some(&bob),
            &cc("s-bob", "SessionStart", json!({"source": "startup"})),
        )
        .await;
    assert!(start.to_string().contains(SECRET_WORD), "{start}");
    // Her raw prompts stay hers.
    let (_, sessions) = app
        .get(&format!("/v1/sessions?projectId={}", app.project_id), Some(&bob))
        .await;
    assert!(!sessions.to_string().contains(&session), "{sessions}");

    // Reversible: taken back, the team loses it again.
    let (status, _) = app
        .post(
            &format!("/v1/memories/{}/unpromote", ids[0]),
            Some(&alice),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let (_, found) = app
        .get(
            &format!("/v1/observations?projectId={}&ids={}", app.project_id, ids[0]),
            Some(&bob),
        )
        .await;
    assert_eq!(found["observations"], json!([]), "{found}");
    let audited = app
        .count("SELECT count(*) FROM audit_log WHERE action IN ('memory.promote', 'memory.unpromote')")
        .await;
    assert_eq!(audited as usize, ids.len() + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_rule_promotes_unopposed_memories_and_never_a_rejected_one() {
    let app = spawn_app().await;
    app.private_first().await;
    let (_, alice) = app.member_token("alice@acme.test").await;
    let (_, bob) = app.member_token("bob@acme.test").await;
    let (_, ids) = alice_works(&app, &alice).await;
    let private_summaries = app
        .count("SELECT count(*) FROM summaries WHERE visibility = 'private'")
        .await;
    assert!(private_summaries >= 1);
    let (status, res) = app
        .patch(
            &format!("/v1/admin/projects/{}", app.project_id),
            Some(&app.admin_token),
            &json!({"promoteAfterDays": 7}),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    // A reviewer rejects one; a member may not.
    let (status, _) = app
        .post(&format!("/v1/memories/{}/reject", ids[0]), Some(&bob), &json!({}))
        .await;
    assert_eq!(status, 403);
    let (status, res) = app
        .post(
            &format!("/v1/memories/{}/reject", ids[0]),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{res}");

    // Not yet seven days: nothing moves.
    assert_eq!(
        cairn_core::store::visibility::promote_unopposed(&app.pool)
            .await
            .unwrap(),
        0
    );
    for table in ["observations", "summaries"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET created_at = created_at - interval '8 days'"
        )))
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let promoted = cairn_core::store::visibility::promote_unopposed(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        promoted as i64,
        ids.len() as i64 - 1 + private_summaries,
        "all but the rejected one"
    );
    let (_, found) = app
        .get(
            &format!("/v1/observations?projectId={}&ids={}", app.project_id, ids[0]),
            Some(&bob),
        )
        .await;
    assert_eq!(
        found["observations"],
        json!([]),
        "the rejected one stays hers: {found}"
    );
    let still_private = app
        .count(
            "SELECT (SELECT count(*) FROM observations WHERE visibility = 'private')
                     + (SELECT count(*) FROM summaries WHERE visibility = 'private')",
        )
        .await;
    assert_eq!(still_private, 1, "only the rejected one");
    let (_, queue) = app
        .get(
            &format!("/v1/review?projectId={}", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(
        queue["memories"],
        json!([]),
        "a rejected memory leaves the queue: {queue}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_written_by_hand_is_the_teams_and_names_its_author() {
    let app = spawn_app().await;
    app.private_first().await;
    let (alice_id, alice) = app.member_token("alice@acme.test").await;
    let (_, bob) = app.member_token("bob@acme.test").await;
    // With a session of hers too: the session's member would make a
    // generated memory private; a written one is shared by writing it.
    let (status, res) = app
        .post(
            &format!("/v1/hooks/claude-code?project={}", app.project_id),
            Some(&alice),
            &cc("s-alice-notes", "SessionStart", json!({"source": "startup"})),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    let session: Uuid =
        sqlx::query_scalar("SELECT id FROM sessions WHERE external_session_id = 's-alice-notes'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&alice),
            &json!({"projectId": app.project_id, "content": format!("{SECRET_WORD}: pin the mirror"),
                    "serverSessionId": session}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let (member, visibility): (Option<Uuid>, String) =
        sqlx::query_as("SELECT member_id, visibility FROM observations WHERE origin = 'manual'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!((member, visibility.as_str()), (Some(alice_id), "team"));
    let (_, found) = app
        .get(
            &format!(
                "/v1/search?projectId={}&query={SECRET_WORD}&mode=fulltext&memberId={alice_id}",
                app.project_id
            ),
            Some(&bob),
        )
        .await;
    assert!(found.to_string().contains("pin the mirror"), "{found}");
}
