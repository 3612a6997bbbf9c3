//! Attribution as a filter: `GET /v1/sessions?memberId=` lists one member's
//! sessions, `GET /v1/timeline?memberId=` walks one member's observations,
//! and both list everyone's without it.

use serde_json::json;
use uuid::Uuid;

use crate::helpers::{TestApp, cc, spawn_app};

/// A session of `token`'s and three observations of `member`'s, a minute apart
/// from `minute`, so the two members' observations interleave in time.
async fn works(app: &TestApp, token: &str, member: Uuid, name: &str, minute: i64) -> Vec<Uuid> {
    let path = format!("/v1/hooks/claude-code?project={}", app.project_id);
    let (status, res) = app
        .post(
            &path,
            Some(token),
            &cc(&format!("s-{name}"), "SessionStart", json!({})),
        )
        .await;
    assert_eq!(status, 200, "{res}");
    let mut ids = vec![];
    for i in 0..3 {
        let id = Uuid::now_v7();
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, member_id, created_at)
             VALUES ($1, $2, $3, 'test:' || $1, 'discovery', $4, $5, now() - make_interval(mins => $6))",
        )
        .bind(id)
        .bind(app.team_id)
        .bind(app.project_id)
        .bind(format!("{name} finding {i}"))
        .bind(member)
        .bind((minute + 2 * i) as i32)
        .execute(&app.pool)
        .await
        .unwrap();
        ids.push(id);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_the_timeline_filter_by_person() {
    let app = spawn_app().await;
    let (alice_id, alice) = app.member_token("alice@acme.test").await;
    let (bob_id, bob) = app.member_token("bob@acme.test").await;
    let hers = works(&app, &alice, alice_id, "alice", 0).await;
    works(&app, &bob, bob_id, "bob", 1).await;
    let p = app.project_id;

    let (_, all) = app.get(&format!("/v1/sessions?projectId={p}"), Some(&bob)).await;
    assert_eq!(all["sessions"].as_array().unwrap().len(), 2, "{all}");
    let (status, only) = app
        .get(
            &format!("/v1/sessions?projectId={p}&memberId={alice_id}"),
            Some(&bob),
        )
        .await;
    assert_eq!(status, 200, "{only}");
    let sessions = only["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{only}");
    assert_eq!(sessions[0]["externalSessionId"], "s-alice");
    assert_eq!(sessions[0]["memberId"], json!(alice_id));

    let anchor = hers[1];
    let titles = |res: &serde_json::Value| -> Vec<String> {
        res["observations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["title"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let (_, everyone) = app
        .get(
            &format!("/v1/timeline?projectId={p}&anchor={anchor}&before=2&after=2"),
            Some(&bob),
        )
        .await;
    let seen = titles(&everyone);
    assert!(seen.iter().any(|t| t.starts_with("bob")), "{everyone}");
    let (status, one) = app
        .get(
            &format!("/v1/timeline?projectId={p}&anchor={anchor}&before=2&after=2&memberId={alice_id}"),
            Some(&bob),
        )
        .await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(
        titles(&one),
        ["alice finding 2", "alice finding 1", "alice finding 0"],
        "{one}"
    );
    let (status, err) = app
        .get(&format!("/v1/sessions?projectId={p}&memberId=nobody"), Some(&bob))
        .await;
    assert_eq!(status, 400, "{err}");
    assert!(err["error"]["code"].is_string(), "{err}");
}
