//! Redis is a hint, never the truth: wake-ups deliver jobs when it is up,
//! the sweeper delivers them while it is down, and a FLUSHALL loses nothing.
//! Each test runs its own redis-server so stopping it disturbs no one else.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use cairn_testkit::{Options, TestApp, spawn_app_with};

use super::support::{MINUTE, post_turn, start, wait_count};

struct PrivateRedis {
    port: u16,
    child: Option<Child>,
}

impl PrivateRedis {
    fn new() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Self { port, child: None };
        redis.start();
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn start(&mut self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server on PATH");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    async fn flushall(&self) {
        let client = redis::Client::open(self.url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

fn completed(app: &TestApp) -> String {
    format!(
        "SELECT count(*) FROM generation_jobs WHERE project_id = '{}' AND status = 'completed'",
        app.project_id
    )
}

async fn app_on(redis: &PrivateRedis) -> TestApp {
    spawn_app_with(Options {
        redis_url: redis.url(),
        ..Default::default()
    })
    .await
}

#[tokio::test]
async fn wake_ups_deliver_jobs_without_the_sweeper() {
    let redis = PrivateRedis::new();
    let app = app_on(&redis).await;
    // A sweep every ten minutes: only a wake-up can bring these jobs in time.
    let generator = start(&app, &[("CAIRN_SWEEP_MS", "600000")]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    post_turn(&app, "wake", "prompt").await;
    wait_count(&app.pool, &completed(&app), 2, Duration::from_secs(15)).await;
    generator.stop().await;
}

#[tokio::test]
async fn with_redis_stopped_jobs_still_complete_and_after_restart_too() {
    let mut redis = PrivateRedis::new();
    let app = app_on(&redis).await;
    let generator = start(&app, &[]);
    redis.stop();
    for i in 0..3 {
        post_turn(&app, &format!("down-{i}"), "prompt while Redis is down").await;
    }
    wait_count(&app.pool, &completed(&app), 6, MINUTE).await;
    redis.start();
    post_turn(&app, "back", "prompt after Redis returned").await;
    wait_count(&app.pool, &completed(&app), 8, MINUTE).await;
    generator.stop().await;
    assert_eq!(
        app.count("SELECT count(*) FROM generation_jobs WHERE status <> 'completed'")
            .await,
        0
    );
}

#[tokio::test]
async fn a_flushall_while_jobs_are_queued_loses_nothing() {
    let redis = PrivateRedis::new();
    let app = app_on(&redis).await;
    for i in 0..3 {
        post_turn(&app, &format!("flush-{i}"), "prompt").await;
    }
    redis.flushall().await;
    let generator = start(&app, &[]);
    wait_count(&app.pool, &completed(&app), 6, MINUTE).await;
    generator.stop().await;
}
