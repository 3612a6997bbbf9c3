//! `GET /v1/live` over the real Redis: a stream of project A gets A's
//! notices and none of B's, a real generator run's `job.changed`, another
//! team's token is refused, streams per token are bounded, and a revoked
//! token's stream ends.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uuid::Uuid;

use super::dashboard_data::{Generator, other_team, post_turn};
use crate::helpers::{Options, TestApp, spawn_app, spawn_app_with};

/// An open SSE response and what it sent so far, parsed into (event, data) pairs.
struct Stream {
    res: reqwest::Response,
    buffer: String,
}

impl Stream {
    async fn open(app: &TestApp, query: &str, token: &str) -> Result<Stream, (u16, Value)> {
        Self::open_at(&app.client, &app.base, query, token).await
    }

    async fn open_at(
        client: &reqwest::Client,
        base: &str,
        query: &str,
        token: &str,
    ) -> Result<Stream, (u16, Value)> {
        let res = client
            .get(format!("{base}/v1/live{query}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        if status != 200 {
            return Err((status, res.json().await.unwrap_or(Value::Null)));
        }
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let mut stream = Stream {
            res,
            buffer: String::new(),
        };
        let (event, data) = stream.next(Duration::from_secs(5)).await.expect("ready");
        assert_eq!(event, "ready", "{data}");
        Ok(stream)
    }

    /// The next event within `within`; `None` on timeout or end of stream.
    async fn next(&mut self, within: Duration) -> Option<(String, Value)> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                match event {
                    Some(event) => return Some((event, serde_json::from_str(&data).unwrap())),
                    None => continue, // a keep-alive comment
                }
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match tokio::time::timeout(left, self.res.chunk()).await {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(Ok(None)) | Ok(Err(_)) => return None,
                Err(_) => return None,
            }
        }
    }

    /// Whether the server ended the stream within `within`.
    async fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            match tokio::time::timeout(left, self.res.chunk()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None)) | Ok(Err(_)) => return true,
                Err(_) => return false,
            }
        }
    }
}

async fn publish(project_id: Uuid, notice: &Value) {
    let client = redis::Client::open(cairn_testkit::redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = redis::cmd("PUBLISH")
        .arg(format!("cairn:live:{project_id}"))
        .arg(notice.to_string())
        .query_async(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stream_gets_its_projects_notices_and_no_others() {
    let app = spawn_app().await;
    let (_, project_b, _) = other_team(&app).await;
    let mut a = Stream::open(&app, &format!("?projectId={}", app.project_id), &app.ingest_token)
        .await
        .unwrap();
    let notice_a = json!({"type": "observation.created", "id": Uuid::now_v7(), "project_id": app.project_id,
                          "session_id": null, "job_id": Uuid::now_v7(), "title": "for A"});
    let notice_b = json!({"type": "observation.created", "id": Uuid::now_v7(), "project_id": project_b,
                          "session_id": null, "job_id": Uuid::now_v7(), "title": "for B"});
    // The API's subscription may still be connecting: publish B then A until A's arrives.
    let deadline = Instant::now() + Duration::from_secs(10);
    let got = loop {
        publish(project_b, &notice_b).await;
        publish(app.project_id, &notice_a).await;
        if let Some(got) = a.next(Duration::from_millis(300)).await {
            break got;
        }
        assert!(Instant::now() < deadline, "A's notice never arrived");
    };
    assert_eq!(got, ("observation.created".to_string(), notice_a.clone()));
    // Whatever else arrives is A's (repeats of the same notice), never B's.
    publish(project_b, &notice_b).await;
    while let Some((event, data)) = a.next(Duration::from_millis(500)).await {
        assert_eq!(event, "observation.created");
        assert_eq!(data["title"], "for A", "{data}");
    }
}

/// Publishes `probe` for the project until the stream gets it (the API's
/// subscription may be (re)connecting meanwhile).
async fn until_received(live: &mut Stream, project_id: Uuid, probe: &Value, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        publish(project_id, probe).await;
        if let Some((event, data)) = live.next(Duration::from_millis(300)).await {
            assert_eq!((event.as_str(), &data), (probe["type"].as_str().unwrap(), probe));
            return;
        }
        assert!(Instant::now() < deadline, "{probe} never arrived");
    }
}

#[tokio::test]
async fn a_real_generator_run_streams_its_job_changes() {
    let app = spawn_app().await;
    let mut live = Stream::open(&app, "", &app.ingest_token).await.unwrap();
    // Wait for the process's Redis subscription: a notice of our own comes back.
    until_received(
        &mut live,
        app.project_id,
        &json!({"type": "probe"}),
        Duration::from_secs(10),
    )
    .await;
    post_turn(
        &app,
        "live",
        "fix the parser panic on empty input",
        "src/parser.rs",
    )
    .await;
    let generator = Generator::start(&app);
    let mut changed = Vec::new();
    let mut created = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while changed.len() < 2 {
        assert!(Instant::now() < deadline, "job.changed: {changed:?}");
        let Some((event, data)) = live.next(Duration::from_secs(5)).await else {
            continue;
        };
        match event.as_str() {
            "job.changed" => changed.push(data),
            "observation.created" | "summary.created" => created += 1,
            _ => {}
        }
    }
    generator.stop().await;
    let jobs: Vec<(Uuid, String, String)> = sqlx::query_as(
        "SELECT id, job_type, status FROM generation_jobs WHERE project_id = $1 ORDER BY created_at",
    )
    .bind(app.project_id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    for (id, job_type, status) in &jobs {
        let notice = changed
            .iter()
            .find(|n| n["jobId"] == id.to_string())
            .unwrap_or_else(|| panic!("no job.changed for {id}: {changed:?}"));
        assert_eq!(notice["type"], "job.changed");
        assert_eq!(notice["status"], *status);
        assert_eq!(notice["status"], "completed");
        assert_eq!(notice["jobType"], *job_type);
    }
    assert!(created >= 1, "the job's rows were announced before its change");
}

#[tokio::test]
async fn other_teams_and_bad_requests_are_refused() {
    let app = spawn_app().await;
    let (_, _, other) = other_team(&app).await;
    let (status, body) = Stream::open(&app, &format!("?projectId={}", app.project_id), &other)
        .await
        .err()
        .unwrap();
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("project_not_found"))
    );
    let res = app
        .client
        .get(format!("{}/v1/live", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
    let ingest_only = app
        .mint(json!({"name": "ingest only", "scopes": ["ingest"]}))
        .await;
    let (status, _) = Stream::open(&app, &format!("?projectId={}", app.project_id), &ingest_only)
        .await
        .err()
        .unwrap();
    assert_eq!(status, 403);
}

#[tokio::test]
async fn streams_per_token_are_bounded_and_freed_on_close() {
    let app = spawn_app().await;
    let mut open = Vec::new();
    for _ in 0..cairn_api::live::MAX_STREAMS_PER_TOKEN {
        open.push(Stream::open(&app, "", &app.ingest_token).await.unwrap());
    }
    let (status, body) = Stream::open(&app, "", &app.ingest_token).await.err().unwrap();
    assert_eq!(
        (status, &body["error"]["code"]),
        (429, &json!("too_many_streams"))
    );
    // Another token is counted apart.
    let other = app.mint(json!({"name": "reader", "scopes": ["read"]})).await;
    let _theirs = Stream::open(&app, &format!("?projectId={}", app.project_id), &other)
        .await
        .unwrap();
    // Closing one frees its slot (the server notices the closed connection).
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Stream::open(&app, "", &app.ingest_token).await {
            Ok(_) => break,
            Err((429, _)) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[tokio::test]
async fn a_revoked_tokens_stream_ends() {
    let app = spawn_app().await;
    let (status, minted) = app
        .post(
            "/v1/admin/tokens",
            Some(&app.admin_token),
            &json!({"name": "watcher", "scopes": ["read"], "projectId": app.project_id}),
        )
        .await;
    assert_eq!(status, 201, "{minted}");
    let secret = minted["secret"].as_str().unwrap();
    let token_id = minted["token"]["id"].as_str().unwrap();
    let mut live = Stream::open(&app, "", secret).await.unwrap();
    assert!(!live.ends_within(Duration::from_millis(500)).await);
    let (status, body) = app
        .post(
            &format!("/v1/admin/tokens/{token_id}/revoke"),
            Some(&app.admin_token),
            &json!({}),
        )
        .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    // The auth cache TTL is 2 s by default: the stream ends within it (plus slack).
    assert!(
        live.ends_within(Duration::from_secs(5)).await,
        "the stream outlived the revocation"
    );
}

/// A TCP forwarder to the real Redis whose connections the test can cut.
struct CuttableRedis {
    url: String,
    cuts: tokio::sync::watch::Sender<u64>,
    /// The local address of each connection it made to Redis.
    upstream_addrs: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl CuttableRedis {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}", listener.local_addr().unwrap());
        let upstream = cairn_testkit::redis_url()
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .to_string();
        let (cuts, watch) = tokio::sync::watch::channel(0u64);
        let upstream_addrs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let addrs = upstream_addrs.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let mut cut = watch.clone();
                cut.mark_unchanged();
                let addrs = addrs.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else {
                        return;
                    };
                    if let Ok(local) = server.local_addr() {
                        addrs.lock().unwrap().push(local.to_string());
                    }
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Self {
            url,
            cuts,
            upstream_addrs,
        }
    }

    /// Redis's addresses of this forwarder's connections in pattern-subscribed mode.
    async fn pattern_subscribers(&self) -> Vec<String> {
        let client = redis::Client::open(cairn_testkit::redis_url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .arg("TYPE")
            .arg("pubsub")
            .query_async(&mut conn)
            .await
            .unwrap();
        let ours = self.upstream_addrs.lock().unwrap().clone();
        list.lines()
            .filter(|line| line.split(' ').any(|f| f.starts_with("psub=") && f != "psub=0"))
            .filter_map(|line| line.split(' ').find_map(|f| f.strip_prefix("addr=")))
            .filter(|addr| ours.iter().any(|o| o == addr))
            .map(str::to_string)
            .collect()
    }

    /// Drops every connection open now (new ones go through).
    fn cut(&self) {
        self.cuts.send_modify(|n| *n += 1);
    }
}

#[tokio::test]
async fn streams_survive_a_redis_drop_and_resume_after_the_reconnect() {
    let redis = CuttableRedis::start().await;
    let app = spawn_app_with(Options {
        redis_url: redis.url.clone(),
        ..Default::default()
    })
    .await;
    let mut live = Stream::open(&app, "", &app.ingest_token).await.unwrap();
    until_received(
        &mut live,
        app.project_id,
        &json!({"type": "before"}),
        Duration::from_secs(10),
    )
    .await;
    let before = redis.pattern_subscribers().await;
    assert_eq!(before.len(), 1, "one subscription per process: {before:?}");
    redis.cut();
    // The stream stays open through the drop, and notices flow again once
    // the subscriber has reconnected (backoff starts at 100 ms).
    until_received(
        &mut live,
        app.project_id,
        &json!({"type": "after"}),
        Duration::from_secs(15),
    )
    .await;
    let after = redis.pattern_subscribers().await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_ne!(
        after, before,
        "the subscription was made again, on a new connection"
    );
}

#[tokio::test]
async fn a_shutdown_ends_open_streams_instead_of_waiting_on_them() {
    let app = spawn_app().await;
    // A second server over the same database, with a shutdown the test controls.
    let (base, stop, server) = crate::helpers::server_until_stopped(&app).await;
    let mut live = Stream::open_at(&app.client, &base, "", &app.ingest_token)
        .await
        .unwrap();
    stop.send(()).unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(5), server).await;
    assert!(finished.is_ok(), "the server waited on an open live stream");
    finished.unwrap().unwrap().unwrap();
    assert!(live.ends_within(Duration::from_secs(1)).await);
}

/// In a private-first project a memory's notice reaches a member without
/// its title (it may be another member's private memory), and an admin —
/// the reviewer — with it.
#[tokio::test]
async fn a_private_first_projects_notices_reach_members_without_titles() {
    let app = spawn_app().await;
    app.private_first().await;
    let (_, member) = app.member_token("bob@acme.test").await;
    let query = format!("?projectId={}", app.project_id);
    let mut as_member = Stream::open(&app, &query, &member).await.unwrap();
    let mut as_admin = Stream::open(&app, &query, &app.admin_token).await.unwrap();
    let id = Uuid::now_v7();
    let notice = json!({"type": "observation.created", "id": id, "project_id": app.project_id,
                        "session_id": Uuid::now_v7(), "job_id": Uuid::now_v7(), "title": "her private finding"});
    let deadline = Instant::now() + Duration::from_secs(10);
    let (event, data) = loop {
        publish(app.project_id, &notice).await;
        if let Some(got) = as_member.next(Duration::from_millis(300)).await {
            break got;
        }
        assert!(Instant::now() < deadline, "the member's notice never arrived");
    };
    assert_eq!(event, "observation.created");
    assert_eq!(data["id"], id.to_string(), "{data}");
    assert!(
        data.get("title").is_none() && data.get("session_id").is_none(),
        "{data}"
    );
    let (_, data) = as_admin
        .next(Duration::from_secs(5))
        .await
        .expect("the admin's notice");
    assert_eq!(data["title"], "her private finding");
}
