//! Shared helpers: an HTTP sign-in, a headless Chromium per test (one at a
//! time: the machine is small), waiting for the page (on the state it
//! reports, not on a clock), screenshots.

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

/// How long a wait may last before the test is called hung. The page says
/// when it has settled (below); this bound only stops a hang, it is not a
/// guess of how long the page takes.
pub const HANG: Duration = Duration::from_secs(60);

/// True when the page shows the route in the address bar with its data
/// loaded and no work in flight: app.js draws each page into a fresh
/// `#view` naming its route (`data-route`), sets `data-loaded` when the
/// page's first fetches are done, and dom.js's `busy` holds `aria-busy`
/// while a form, button or refresh is at work.
const SETTLED: &str = "const v = document.getElementById('view');
    return !!v && v.dataset.route === location.hash && v.hasAttribute('data-loaded')
        && v.getAttribute('aria-busy') !== 'true'";

/// What the page looked like, for a failure's message.
async fn page_state(c: &Client) -> String {
    let state = c
        .execute(
            "const v = document.getElementById('view');
             return JSON.stringify({hash: location.hash, route: v && v.dataset.route,
                 loaded: !!v && v.hasAttribute('data-loaded'), busy: v && v.getAttribute('aria-busy'),
                 main: (document.querySelector('main') || {}).innerText})",
            vec![],
        )
        .await;
    match state {
        Ok(Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

async fn is_settled(c: &Client) -> bool {
    // During a navigation the script may fail: not settled yet.
    matches!(c.execute(SETTLED, vec![]).await, Ok(Value::Bool(true)))
}

/// Waits until the page has settled (see [`SETTLED`]).
pub async fn settled(c: &Client) {
    let deadline = Instant::now() + HANG;
    while !is_settled(c).await {
        if Instant::now() > deadline {
            panic!("the page did not settle within {HANG:?}: {}", page_state(c).await);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The first element matching `css` whose text contains `text`, once the
/// page has settled (an element can also come later, from a live update).
pub async fn wait_text(c: &Client, css: &str, text: &str) -> Element {
    let deadline = Instant::now() + HANG;
    let mut seen = Vec::new();
    loop {
        if is_settled(c).await
            && let Ok(all) = c.find_all(Locator::Css(css)).await
        {
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
            panic!(
                "no `{css}` with text `{text}` within {HANG:?}; seen {seen:?}; page: {}",
                page_state(c).await
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The element matching `css`, once the page has settled.
pub async fn wait_for(c: &Client, css: &str) -> Element {
    let deadline = Instant::now() + HANG;
    loop {
        if is_settled(c).await
            && let Ok(el) = c.find(Locator::Css(css)).await
        {
            return el;
        }
        if Instant::now() > deadline {
            panic!("no `{css}` within {HANG:?}; page: {}", page_state(c).await);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
                tokio::time::sleep(Duration::from_millis(100)).await;
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
