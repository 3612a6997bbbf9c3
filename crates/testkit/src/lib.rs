//! The test harness shared by Cairn's integration tests and benchmarks:
//! `spawn_app()` is a real cairn-api on a free port, over its own fresh
//! Postgres database and the local Redis, with bootstrap tokens.

pub mod deploy_story;
pub mod oidc;
pub mod standby;

use std::collections::HashMap;

use cairn_api::{config::ApiConfig, server, state::AppState};
use cairn_shared::{bootstrap, db};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

pub struct TestApp {
    pub base: String,
    pub pool: PgPool,
    pub client: reqwest::Client,
    pub admin_token: String,
    pub ingest_token: String,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub database_url: String,
    pub env: HashMap<String, String>,
    /// The served process's state (its engine: retrieval index, counts).
    pub state: AppState,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The local embedding model's directory; fails the test when it is
/// missing (`scripts/fetch-model.sh` fetches it).
pub fn model_dir() -> std::path::PathBuf {
    let dir = cairn_embed::model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {} (run scripts/fetch-model.sh)",
        dir.display()
    );
    dir
}

pub fn admin_url() -> String {
    std::env::var("CAIRN_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub fn redis_url() -> String {
    std::env::var("CAIRN_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// A new, empty database on the test server; its URL.
pub async fn fresh_database() -> String {
    let admin = PgPool::connect(&admin_url())
        .await
        .expect("connect to Postgres (CAIRN_TEST_DATABASE_URL)");
    let name = format!("cairn_test_{}", Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    let base = admin_url();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    format!("{prefix}/{name}")
}

pub struct Options {
    pub redis_url: String,
    pub extra: Vec<(&'static str, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            redis_url: redis_url(),
            extra: vec![],
        }
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Options::default()).await
}

pub async fn spawn_app_with(options: Options) -> TestApp {
    spawn_app_on(fresh_database().await, options).await
}

/// [`spawn_app_with`] over an empty database of the caller's (another
/// cluster's, say): migrated and bootstrapped by the app.
pub async fn spawn_app_on(database_url: String, options: Options) -> TestApp {
    let mut env: HashMap<String, String> = [
        ("CAIRN_DATABASE_URL", database_url.clone()),
        ("CAIRN_REDIS_URL", options.redis_url.clone()),
        (
            "CAIRN_JWT_SECRET",
            "test-signing-key-0123456789abcdef-0123456789".into(),
        ),
        ("CAIRN_DATABASE_MAX_CONNECTIONS", "10".into()),
        ("CAIRN_MAX_WAIT_MS", "300".into()),
        ("CAIRN_MAX_BODY_BYTES", "262144".into()),
        ("CAIRN_MAX_FIELD_BYTES", "4096".into()),
        ("CAIRN_BOOTSTRAP", "false".into()),
        // Tests send bursts from one address and one token; the rate-limit
        // tests set their own limits.
        ("CAIRN_RATE_LIMIT_PER_IP", "0".into()),
        ("CAIRN_RATE_LIMIT_PER_TOKEN", "0".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    // The embedder's settings pass through, so a suite can run with embeddings on.
    for (k, v) in std::env::vars().filter(|(k, _)| k.starts_with("CAIRN_EMBED_")) {
        env.insert(k, v);
    }
    for (k, v) in options.extra {
        env.insert(k.to_string(), v);
    }
    let state = start_state(&env).await;
    let done = bootstrap::bootstrap_if_empty(&state.pool, &state.signer)
        .await
        .unwrap()
        .expect("fresh database");
    let (base, server) = serve(state.clone()).await;
    TestApp {
        base,
        pool: state.pool.clone(),
        client: reqwest::Client::new(),
        admin_token: done.admin.secret,
        ingest_token: done.ingest.secret,
        team_id: done.team.id,
        project_id: done.project.id,
        database_url,
        env,
        state,
        server,
    }
}

async fn start_state(env: &HashMap<String, String>) -> AppState {
    let config = ApiConfig::from_env(env).expect("test config");
    let pool = db::connect(&config.store).await.unwrap();
    db::run_migrations(&pool).await.unwrap();
    AppState::new(pool, config).unwrap()
}

async fn serve(state: AppState) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let _ = server::serve(state, listener).await;
    });
    (base, handle)
}

impl TestApp {
    /// The same database served by a new API process state (a restart, or a second replica).
    pub async fn restart(&self) -> TestApp {
        self.restart_with(vec![]).await
    }

    /// [`TestApp::restart`] with these variables set too.
    pub async fn restart_with(&self, extra: Vec<(&'static str, String)>) -> TestApp {
        let mut env = self.env.clone();
        for (k, v) in extra {
            env.insert(k.to_string(), v);
        }
        let state = start_state(&env).await;
        let (base, server) = serve(state.clone()).await;
        TestApp {
            base,
            pool: state.pool.clone(),
            client: reqwest::Client::new(),
            admin_token: self.admin_token.clone(),
            ingest_token: self.ingest_token.clone(),
            team_id: self.team_id,
            project_id: self.project_id,
            database_url: self.database_url.clone(),
            env,
            state,
            server,
        }
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut req = self.client.post(format!("{}{path}", self.base)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn post_raw(
        &self,
        path: &str,
        token: Option<&str>,
        body: Vec<u8>,
        content_type: &str,
    ) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", content_type)
            .body(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut req = self.client.get(format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn delete(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut req = self.client.delete(format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn patch(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut req = self.client.patch(format!("{}{path}", self.base)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    /// Creates another project of the team (admin token); returns its id.
    pub async fn create_project(&self, slug: &str) -> Uuid {
        let (status, res) = self
            .post(
                "/v1/admin/projects",
                Some(&self.admin_token),
                &serde_json::json!({ "slug": slug }),
            )
            .await;
        assert_eq!(status, 201, "{res}");
        res["project"]["id"].as_str().unwrap().parse().unwrap()
    }

    /// Posts a Claude Code hook event with the ingest token.
    pub async fn hook(&self, body: Value) -> (u16, Value) {
        self.post("/v1/hooks/claude-code", Some(&self.ingest_token), &body)
            .await
    }

    /// [`TestApp::hook`] with the SHA-256 of the tool's file (`fileHash`),
    /// as `cairn hook` sends it after a file tool ran.
    pub async fn hook_with_hash(&self, body: Value, hash: &str) -> (u16, Value) {
        let path = format!("/v1/hooks/claude-code?fileHash={hash}");
        self.post(&path, Some(&self.ingest_token), &body).await
    }

    /// Mints a token with the admin token.
    pub async fn mint(&self, body: Value) -> String {
        let (status, res) = self
            .post("/v1/admin/tokens", Some(&self.admin_token), &body)
            .await;
        assert_eq!(status, 201, "{res}");
        res["secret"].as_str().unwrap().to_string()
    }

    /// Makes the bootstrap project `private-first` (its admin's PATCH, checked).
    pub async fn private_first(&self) {
        let (status, res) = self
            .patch(
                &format!("/v1/admin/projects/{}", self.project_id),
                Some(&self.admin_token),
                &serde_json::json!({"memoryVisibility": "private-first"}),
            )
            .await;
        assert_eq!(status, 200, "{res}");
        assert_eq!(res["project"]["memoryVisibility"], "private-first", "{res}");
    }

    /// A member of the bootstrap team added by email, and a laptop token of
    /// theirs (`ingest` + `read`, as `cairn login` mints): (member id, token).
    pub async fn member_token(&self, email: &str) -> (Uuid, String) {
        use cairn_shared::{
            auth::{Scope, SigningKey, TokenSigner},
            tenancy::{Role, TokenKind, members, tokens},
        };
        let member = members::add(&self.pool, self.team_id, email, Some(email), Role::Member)
            .await
            .unwrap();
        let key = SigningKey::new(self.env["CAIRN_JWT_SECRET"].clone().into_bytes()).unwrap();
        let minted = tokens::mint_token(
            &self.pool,
            &TokenSigner::new(&key),
            tokens::NewToken {
                team_id: self.team_id,
                project_id: None,
                name: format!("laptop: {email}"),
                scopes: vec![Scope::Ingest, Scope::Read],
                expires_at: None,
                created_by: None,
                member_id: Some(member.id),
                kind: TokenKind::Laptop,
                host: Some(email.into()),
            },
        )
        .await
        .unwrap();
        (member.id, minted.secret)
    }

    /// Generates the bootstrap project's due jobs inline, as the embedded
    /// engine does (heuristic provider, no embeddings); what it did.
    pub async fn generate(&self) -> cairn_core::client::Generated {
        let mut options = cairn_core::client::Options::from_env().unwrap();
        options.project = Some(cairn_core::tenancy::ProjectRef {
            team_id: self.team_id,
            id: self.project_id,
        });
        options.embedder = None;
        cairn_core::client::Cairn::with_options(self.pool.clone(), options)
            .await
            .unwrap()
            .generate()
            .await
            .unwrap()
    }

    pub async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }
}

async fn read(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    assert!(
        res.headers().contains_key("x-request-id"),
        "every response carries X-Request-Id"
    );
    let text = res.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, value)
}

/// A Claude Code hook body.
pub fn cc(session: &str, event: &str, extra: Value) -> Value {
    let mut body = serde_json::json!({
        "session_id": session,
        "transcript_path": "/home/dev/.claude/projects/app/t.jsonl",
        "cwd": "/home/dev/app",
        "hook_event_name": event,
        "permission_mode": "default",
    });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    body
}

/// Seeds `n` due observation jobs straight into the database, each with one
/// stored tool event, as the ingest path would have left them (one session,
/// one turn per job). For races and benchmarks that need many jobs at once.
pub async fn seed_jobs(pool: &PgPool, team_id: Uuid, project_id: Uuid, n: i64) -> Uuid {
    let session_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, prompt_counter)
         VALUES ($1, $2, $3, 'claude-code', $4, $5)",
    )
    .bind(session_id)
    .bind(team_id)
    .bind(project_id)
    .bind(format!("seed-{session_id}"))
    .bind(n as i32)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "WITH jobs AS (
             INSERT INTO generation_jobs (id, team_id, project_id, session_id, job_type, source_type,
                 prompt_number, sealed, event_count, idempotency_key)
             SELECT gen_random_uuid(), $1, $2, $3, 'observations', 'agent_event', g, true, 1,
                 'seed:' || $3 || ':' || g
             FROM generate_series(1, $4::int) g
             RETURNING id, prompt_number)
         INSERT INTO agent_events (id, team_id, project_id, session_id, job_id, source_adapter, source_type,
             event_type, idempotency_key, prompt_number, tool_name, payload, occurred_at)
         SELECT gen_random_uuid(), $1, $2, $3, id, 'claude-code', 'hook', 'PostToolUse',
             'seed:' || $3 || ':' || prompt_number, prompt_number, 'Edit',
             jsonb_build_object('tool_name', 'Edit',
                 'tool_input', jsonb_build_object('file_path', 'src/module_' || prompt_number || '.rs')),
             now()
         FROM jobs",
    )
    .bind(team_id)
    .bind(project_id)
    .bind(session_id)
    .bind(n as i32)
    .execute(pool)
    .await
    .unwrap();
    session_id
}
