//! Replays the data set through a real API (`cairn_testkit::spawn_app_with`)
//! and an in-process generator with the `heuristic` provider, one turn at a
//! time: each turn's jobs complete before the next turn is posted, so rows
//! are written in the same order on every run and rankings that break ties
//! by time are repeatable.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use anyhow::{Context, bail, ensure};
use cairn_generator::{config::GeneratorConfig, worker};
use cairn_testkit::{Options, TestApp, spawn_app_with};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{data::Dataset, events::session_events, store};

/// How long one turn's jobs may take before the run gives up.
const JOB_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a restarted generator's backfill may take to embed the rows
/// written without a vector.
const EMBED_TIMEOUT: Duration = Duration::from_secs(60);
/// Events are dated this far apart (`X-Cairn-Occurred-At`), from one base.
const EVENT_SPACING_MS: i64 = 2_000;

/// A running API and generator holding the replayed data set.
pub struct Replayed {
    pub app: TestApp,
    /// Project slug → id.
    pub projects: HashMap<String, uuid::Uuid>,
    /// The generator's environment (to start it again).
    env: HashMap<String, String>,
    generator: Option<(CancellationToken, JoinHandle<anyhow::Result<()>>)>,
}

/// The environment both processes read, beyond the testkit's: production
/// size limits, and a prompt-context deadline a debug build can meet.
fn api_options() -> Options {
    let mut extra = vec![
        ("CAIRN_MAX_FIELD_BYTES", "16384".to_string()),
        ("CAIRN_MAX_BODY_BYTES", "2097152".to_string()),
        ("CAIRN_PROMPT_CONTEXT_DEADLINE_MS", "10000".to_string()),
        // A query's embedding must not time out on a busy machine (vector and hybrid modes).
        ("CAIRN_EMBED_TIMEOUT_MS", "60000".to_string()),
    ];
    if let Ok(home) = std::env::var("HOME") {
        extra.push(("HOME", home));
    }
    Options {
        extra,
        ..Options::default()
    }
}

/// Starts the API and generator, creates the projects (prompt context on),
/// and posts every session, waiting for each turn's jobs.
pub async fn replay(data: &Dataset) -> anyhow::Result<Replayed> {
    let app = spawn_app_with(api_options()).await;
    let mut env: HashMap<String, String> = [
        ("CAIRN_DATABASE_URL", app.database_url.as_str()),
        ("CAIRN_REDIS_URL", app.env["CAIRN_REDIS_URL"].as_str()),
        ("CAIRN_PROVIDER", "heuristic"),
        ("CAIRN_WORKERS", "1"),
        ("CAIRN_WAKEUP_POLL_MS", "100"),
        ("CAIRN_EMBED_TIMEOUT_MS", "60000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Ok(home) = std::env::var("HOME") {
        env.insert("HOME".into(), home);
    }
    let mut replayed = Replayed {
        app,
        projects: HashMap::new(),
        env,
        generator: None,
    };
    replayed.start_generator()?;
    for project in &data.projects {
        let id = create_project(&replayed.app, &project.slug, &project.name).await?;
        replayed.projects.insert(project.slug.clone(), id);
    }
    // Dated from a minute-aligned base a day ago: within the API's 30-day window.
    let base = (chrono::Utc::now().timestamp_millis() / 60_000 - 24 * 60) * 60_000;
    let mut seq = 0;
    for session in &data.sessions {
        let cwd = &data.project(&session.project).context("unknown project")?.cwd;
        for event in session_events(session, cwd) {
            seq += 1;
            let at = base + seq * EVENT_SPACING_MS;
            replayed
                .post_hook(&session.project, &event.body, Some(at))
                .await?;
            let name = event.body["hook_event_name"].as_str().unwrap_or_default();
            if matches!(name, "Stop" | "SessionEnd") {
                wait_for_jobs(&replayed.app)
                    .await
                    .with_context(|| format!("session {} turn {:?}", session.id, event.turn))?;
            }
        }
    }
    Ok(replayed)
}

impl Replayed {
    /// Posts one Claude Code hook body to `project`; returns the hook's answer.
    pub async fn post_hook(&self, project: &str, body: &Value, at_ms: Option<i64>) -> anyhow::Result<Value> {
        let app = &self.app;
        let mut req = app
            .client
            .post(format!("{}/v1/hooks/claude-code?project={project}", app.base))
            .bearer_auth(&app.admin_token)
            .json(body);
        if let Some(at) = at_ms {
            req = req.header("X-Cairn-Occurred-At", at.to_string());
        }
        let res = req.send().await.context("posting a hook")?;
        let status = res.status();
        let text = res.text().await?;
        ensure!(status.is_success(), "hook answered {status}: {text}");
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// GET `path` with the admin token: status and JSON body.
    pub async fn get(&self, path: &str) -> anyhow::Result<(u16, Value)> {
        let app = &self.app;
        let res = app
            .client
            .get(format!("{}{path}", app.base))
            .bearer_auth(&app.admin_token)
            .send()
            .await
            .with_context(|| format!("GET {path}"))?;
        let status = res.status().as_u16();
        let text = res.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    fn start_generator(&mut self) -> anyhow::Result<()> {
        let config = GeneratorConfig::from_env(&self.env).context("generator config")?;
        let shutdown = CancellationToken::new();
        let handle = tokio::spawn(worker::run(config, shutdown.clone()));
        self.generator = Some((shutdown, handle));
        Ok(())
    }

    /// With embeddings on (model files present, the generator writing
    /// vectors) and rows written without one, starts the generator again:
    /// its start-up backfill embeds them. Waits for that, so vector search
    /// sees every memory as a long-running deployment would. Returns how
    /// many rows lack a vector and how many have one (`None`: no embedding
    /// tables).
    pub async fn complete_vectors(&mut self) -> anyhow::Result<Option<(i64, i64)>> {
        let counts = store::vectors(&self.app.pool).await?;
        let Some((missing, embedded)) = counts else {
            return Ok(None);
        };
        // No vector at all: this generator does not embed; nothing to wait for.
        if missing == 0 || embedded == 0 || !super::model_files_present() {
            return Ok(counts);
        }
        self.stop_generator().await?;
        self.start_generator()?;
        let started = Instant::now();
        loop {
            let counts = store::vectors(&self.app.pool).await?;
            if counts.is_none_or(|(missing, _)| missing == 0) || started.elapsed() > EMBED_TIMEOUT {
                return Ok(counts);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the generator (nothing more is written), waiting for it to drain.
    pub async fn stop_generator(&mut self) -> anyhow::Result<()> {
        if let Some((shutdown, handle)) = self.generator.take() {
            shutdown.cancel();
            handle.await.context("generator task")??;
        }
        Ok(())
    }

    /// Stops everything and drops the database.
    pub async fn finish(mut self) -> anyhow::Result<()> {
        self.stop_generator().await?;
        crate::drop_database(&self.app.pool, &self.app.database_url).await
    }
}

async fn create_project(app: &TestApp, slug: &str, name: &str) -> anyhow::Result<uuid::Uuid> {
    let (status, res) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({ "slug": slug, "name": name }),
        )
        .await;
    ensure!(status == 201, "creating project {slug}: {status} {res}");
    let id = res["project"]["id"].as_str().context("project id")?.parse()?;
    // Related memories on UserPromptSubmit are opt-in per project.
    let path = format!("/v1/admin/projects/{slug}");
    let res = app
        .client
        .patch(format!("{}{path}", app.base))
        .bearer_auth(&app.admin_token)
        .json(&json!({ "promptContext": true }))
        .send()
        .await?;
    ensure!(
        res.status().is_success(),
        "enabling prompt context: {}",
        res.status()
    );
    Ok(id)
}

/// Waits until no job is queued or processing.
async fn wait_for_jobs(app: &TestApp) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if store::open_jobs(&app.pool).await? == 0 {
            return Ok(());
        }
        if started.elapsed() > JOB_TIMEOUT {
            bail!("jobs still open after {JOB_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
