//! Shared helpers: an HTTP sign-in, a headless Chromium per test (one at a
//! time: the machine is small), waiting for the page, screenshots.

use std::{
    net::TcpListener,
    os::unix::process::CommandExt,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use cairn_testkit::TestApp;
use fantoccini::{Client, ClientBuilder, Locator, elements::Element};
use serde_json::{Value, json};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Signs in over HTTP: the `cairn_session=…` pair and the session body.
pub async fn sign_in(app: &TestApp, token: &str) -> (String, Value) {
    let res = app
        .client
        .post(format!("{}/dashboard/session", app.base))
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    let pair = cookie.split(';').next().unwrap().to_string();
    (pair, res.json().await.unwrap())
}

/// Only one browser at a time, whatever the test threads.
static BROWSER_SLOT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub struct Browser {
    pub client: Client,
    _driver: Driver,
    _slot: tokio::sync::MutexGuard<'static, ()>,
}

/// chromedriver in its own process group: dropping it ends the driver and
/// every browser process it started, whether the test passed or panicked.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A headless Chromium at `width`×`height`. Fails (never skips) when the
/// browser is missing.
pub async fn browser(width: u32, height: u32) -> Browser {
    browser_with(width, height, &[]).await
}

/// [`browser`] with more Chromium flags.
pub async fn browser_with(width: u32, height: u32, flags: &[&str]) -> Browser {
    assert!(
        std::path::Path::new(CHROMIUM).exists() && std::path::Path::new(CHROMEDRIVER).exists(),
        "the dashboard tests need Debian's chromium and chromium-driver \
         ({CHROMIUM}, {CHROMEDRIVER}): run scripts/tools/chromium.sh"
    );
    let slot = BROWSER_SLOT.lock().await;
    let port = free_port();
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver"),
    );
    let mut options = json!({
        "binary": CHROMIUM,
        "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions",
            format!("--window-size={},{height}", width.max(500)),
        ],
    });
    for flag in flags {
        options["args"].as_array_mut().unwrap().push(json!(flag));
    }
    // A headless window is at least 500 px wide: a phone's width is emulated.
    if width < 500 {
        options["mobileEmulation"] =
            json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0}});
    }
    let caps: serde_json::Map<String, Value> =
        serde_json::from_value(json!({"browserName": "chrome", "goog:chromeOptions": options})).unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let client = loop {
        // Plain HTTP to the local driver: no TLS stack needed.
        match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => panic!("chromedriver did not start: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    Browser {
        client,
        _driver: driver,
        _slot: slot,
    }
}

/// The first element matching `css` whose text contains `text`, within 10 s.
pub async fn wait_text(c: &Client, css: &str, text: &str) -> Element {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    loop {
        if let Ok(all) = c.find_all(Locator::Css(css)).await {
            seen.clear();
            for el in all {
                let t = el.text().await.unwrap_or_default();
                if t.contains(text) {
                    return el;
                }
                seen.push(t);
            }
        }
        if Instant::now() > deadline {
            let main = js(c, "return document.querySelector('main').innerText").await;
            panic!("no `{css}` with text `{text}` within 10 s; seen {seen:?}; main: {main}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The element matching `css`, within 10 s.
pub async fn wait_for(c: &Client, css: &str) -> Element {
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` within 10 s: {e}"))
}

/// Types into a field. A page renders again when its data arrives, which
/// can replace the field between finding it and typing: then it is found
/// again (a few times at most).
pub async fn fill(c: &Client, css: &str, text: &str) {
    for attempt in 1.. {
        let el = wait_for(c, css).await;
        let typed = async {
            el.clear().await?;
            el.send_keys(text).await
        };
        match typed.await {
            Ok(()) => return,
            Err(e) if attempt < 5 && format!("{e:?}").contains("StaleElementReference") => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!("typing into `{css}`: {e}"),
        }
    }
}

/// Runs a script and returns its value.
pub async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// Types the token into the sign-in form and submits it.
pub async fn sign_in_browser(c: &Client, base: &str, token: &str) {
    c.goto(&format!("{base}/")).await.unwrap();
    let input = wait_for(c, "#token").await;
    input.send_keys(token).await.unwrap();
    c.find(Locator::Css("#sign-in button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(c, "#who-name").await;
}

/// Saves a PNG of the page under the test target's temporary directory.
pub async fn screenshot(c: &Client, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, c.screenshot().await.unwrap()).unwrap();
    path
}

/// Publishes a notice on the project's live channel, as the generator does.
pub async fn publish_live(project_id: uuid::Uuid, notice: &Value) {
    let redis = redis::Client::open(cairn_testkit::redis_url()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = redis::cmd("PUBLISH")
        .arg(format!("cairn:live:{project_id}"))
        .arg(notice.to_string())
        .query_async(&mut conn)
        .await
        .unwrap();
}
