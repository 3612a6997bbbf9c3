//! The API's configuration, from `CAIRN_*` environment variables (see README).

use std::{net::SocketAddr, time::Duration};

use cairn_shared::{
    auth::SigningKey,
    config::{ConfigError, Env, StoreConfig, listen_addr, millis, parsed, required, var},
};

#[derive(Clone, Debug)]
pub struct ApiConfig {
    pub listen: SocketAddr,
    /// `CAIRN_METRICS_ADDR`: a separate listener for `/metrics`; off when unset.
    pub metrics_addr: Option<SocketAddr>,
    pub public_url: String,
    /// Whether `CAIRN_PUBLIC_URL` was set (else the URL is a guess from the listen port).
    pub public_url_set: bool,
    /// `CAIRN_OIDC_*`: single sign-on; `None` for token sign-in only.
    pub oidc: Option<crate::auth::oidc::config::OidcConfig>,
    pub store: StoreConfig,
    /// `CAIRN_DATABASE_READ_URL`: a streaming replica of the primary for
    /// reads that may lag (search, context, dashboard listings); `None`
    /// reads everything from `CAIRN_DATABASE_URL`.
    pub database_read_url: Option<String>,
    pub signing_key: SigningKey,
    pub limits: Limits,
    pub rate_limits: RateLimits,
    /// Tools whose events are dropped before storage (case-insensitive, `prefix*`).
    pub skip_tools: Vec<String>,
    /// How long a verified token is trusted before its row is read again;
    /// bounds how late a revocation reaches this replica.
    pub auth_cache_ttl: Duration,
    pub coalescing: Coalescing,
    /// Bootstrap a default team, project and tokens on an empty database.
    pub bootstrap: bool,
    /// Health reports `degraded` once a due job has waited this long.
    pub queue_age_degraded: Duration,
    /// UserPromptSubmit answers without related memories rather than wait longer than this.
    pub prompt_context_deadline: Duration,
    /// PreToolUse answers without file memories rather than wait longer than this.
    pub file_memories_deadline: Duration,
    /// `CAIRN_EMBED_*`: the embedder for vector and hybrid search.
    pub embed: cairn_embed::EmbedConfig,
    /// `CAIRN_PROVIDER` and its settings, as the generator reads them: the
    /// model that answers `POST /v1/ask` (the heuristic: the memories themselves).
    pub provider: cairn_core::generation::provider::ProviderConfig,
    /// An ask answers with the memories themselves rather than wait for the
    /// model longer than this (`CAIRN_ASK_DEADLINE_MS`).
    pub ask_deadline: Duration,
    /// The retrieval index: its memory bound (`CAIRN_INDEX_MAX_BYTES`, 4 GiB)
    /// and how often it polls the database when nobody searches
    /// (`CAIRN_INDEX_POLL_MS`, 500).
    pub index_max_bytes: usize,
    pub index_poll: Duration,
}

#[derive(Clone, Debug)]
pub struct Limits {
    /// A request body over this answers 413.
    pub max_body_bytes: usize,
    /// Each string field of a payload is cut to this, keeping head and tail.
    pub max_field_bytes: usize,
    /// The longest `wait=true` waits for a job to settle.
    pub max_wait: Duration,
    /// How long a Redis push may take before ingest answers `queued_only`.
    pub wakeup_timeout: Duration,
    /// Request bodies buffered at once, all requests together; past it a
    /// request waits briefly, then answers 503.
    pub max_buffered_body_bytes: usize,
    /// A client must send its request headers within this.
    pub header_read_timeout: Duration,
    /// A client must send its whole body within this.
    pub body_read_timeout: Duration,
    /// A request answers 503 when its handler takes longer.
    pub request_timeout: Duration,
    /// Open connections at once; further clients wait to be accepted.
    pub max_connections: usize,
    /// Header block, URI and header count a request may carry (431 / 414).
    pub max_header_bytes: usize,
    pub max_uri_bytes: usize,
    pub max_headers: usize,
}

/// Request rates: each replica's own, and (with `shared`) the same limits
/// across every replica through Redis; see README.
#[derive(Clone, Debug)]
pub struct RateLimits {
    /// `CAIRN_RATE_LIMIT_SHARED` (default true): share the limits through Redis.
    pub shared: bool,
    /// Requests per second per credential, and the burst allowed above it.
    pub per_token: u32,
    pub per_token_burst: u32,
    /// Requests per second per client address, and its burst.
    pub per_ip: u32,
    pub per_ip_burst: u32,
    /// Header whose last entry is the client address (behind a proxy), e.g.
    /// `x-forwarded-for`; unset means the TCP peer.
    pub client_ip_header: Option<String>,
    /// How long a refused token is answered from memory without Postgres.
    pub bad_token_ttl: Duration,
}

pub use cairn_core::ingest::Coalescing;

/// `CAIRN_DATABASE_READ_URL`, when set: a Postgres URL (its password never
/// shown in an error).
fn database_read_url(env: &dyn Env) -> Result<Option<String>, ConfigError> {
    let Some(url) = var(env, "CAIRN_DATABASE_READ_URL")?.filter(|u| !u.trim().is_empty()) else {
        return Ok(None);
    };
    if !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
        let scheme = url
            .split_once("://")
            .map_or("…".to_string(), |(s, _)| format!("{s}://…"));
        return Err(ConfigError::Invalid {
            name: "CAIRN_DATABASE_READ_URL",
            value: scheme,
            reason: "must start with postgres:// or postgresql://".into(),
        });
    }
    Ok(Some(url))
}

impl ApiConfig {
    pub fn from_env(env: &dyn Env) -> Result<Self, ConfigError> {
        let key = required(
            env,
            "CAIRN_JWT_SECRET",
            "a random secret of at least 32 bytes used to sign tokens (e.g. `openssl rand -hex 32`)",
        )?;
        let signing_key =
            SigningKey::new(key.clone().into_bytes()).map_err(|reason| ConfigError::Invalid {
                name: "CAIRN_JWT_SECRET",
                value: "<hidden>".into(),
                reason,
            })?;
        let listen = listen_addr(env, "CAIRN_LISTEN_ADDR", "0.0.0.0:8080")?;
        let skip_tools = env
            .get("CAIRN_SKIP_TOOLS")
            .unwrap_or_else(|| "TodoRead,TodoWrite,ListMcpResourcesTool".into())
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        Ok(Self {
            listen,
            metrics_addr: env
                .get("CAIRN_METRICS_ADDR")
                .filter(|v| !v.trim().is_empty())
                .map(|_| listen_addr(env, "CAIRN_METRICS_ADDR", ""))
                .transpose()?,
            public_url: env
                .get("CAIRN_PUBLIC_URL")
                .unwrap_or_else(|| format!("http://127.0.0.1:{}", listen.port())),
            public_url_set: env.get("CAIRN_PUBLIC_URL").is_some(),
            oidc: crate::auth::oidc::config::OidcConfig::from_env(env)?,
            store: StoreConfig::from_env(env)?,
            database_read_url: database_read_url(env)?,
            signing_key,
            limits: Limits {
                max_body_bytes: parsed(env, "CAIRN_MAX_BODY_BYTES", 2 * 1024 * 1024)?,
                max_field_bytes: parsed(env, "CAIRN_MAX_FIELD_BYTES", 16 * 1024)?,
                max_wait: millis(env, "CAIRN_MAX_WAIT_MS", 30_000)?,
                wakeup_timeout: millis(env, "CAIRN_WAKEUP_TIMEOUT_MS", 250)?,
                max_buffered_body_bytes: parsed(env, "CAIRN_MAX_BUFFERED_BODY_BYTES", 64 * 1024 * 1024)?,
                header_read_timeout: millis(env, "CAIRN_HEADER_READ_TIMEOUT_MS", 10_000)?,
                body_read_timeout: millis(env, "CAIRN_BODY_READ_TIMEOUT_MS", 30_000)?,
                request_timeout: millis(env, "CAIRN_REQUEST_TIMEOUT_MS", 60_000)?,
                max_connections: parsed(env, "CAIRN_MAX_CONNECTIONS", 4096)?,
                max_header_bytes: parsed(env, "CAIRN_MAX_HEADER_BYTES", 32 * 1024)?,
                max_uri_bytes: parsed(env, "CAIRN_MAX_URI_BYTES", 8 * 1024)?,
                max_headers: parsed(env, "CAIRN_MAX_HEADERS", 100)?,
            },
            rate_limits: RateLimits {
                shared: parsed(env, "CAIRN_RATE_LIMIT_SHARED", true)?,
                per_token: parsed(env, "CAIRN_RATE_LIMIT_PER_TOKEN", 100)?,
                per_token_burst: parsed(env, "CAIRN_RATE_LIMIT_PER_TOKEN_BURST", 500)?,
                per_ip: parsed(env, "CAIRN_RATE_LIMIT_PER_IP", 300)?,
                per_ip_burst: parsed(env, "CAIRN_RATE_LIMIT_PER_IP_BURST", 1000)?,
                client_ip_header: env
                    .get("CAIRN_CLIENT_IP_HEADER")
                    .map(|h| h.trim().to_ascii_lowercase())
                    .filter(|h| !h.is_empty()),
                bad_token_ttl: millis(env, "CAIRN_BAD_TOKEN_CACHE_MS", 60_000)?,
            },
            skip_tools,
            auth_cache_ttl: millis(env, "CAIRN_AUTH_CACHE_TTL_MS", 2_000)?,
            coalescing: Coalescing {
                max_turn_events: parsed(env, "CAIRN_MAX_TURN_EVENTS", 50)?,
                turn_idle: millis(env, "CAIRN_TURN_IDLE_MS", 120_000)?,
            },
            bootstrap: parsed(env, "CAIRN_BOOTSTRAP", true)?,
            queue_age_degraded: millis(env, "CAIRN_QUEUE_AGE_DEGRADED_MS", 600_000)?,
            prompt_context_deadline: millis(env, "CAIRN_PROMPT_CONTEXT_DEADLINE_MS", 150)?,
            file_memories_deadline: millis(env, "CAIRN_FILE_MEMORIES_DEADLINE_MS", 100)?,
            embed: cairn_embed::EmbedConfig::from_lookup(|k| env.get(k)),
            provider: cairn_core::generation::provider::ProviderConfig::from_env(env)?,
            ask_deadline: millis(env, "CAIRN_ASK_DEADLINE_MS", 20_000)?,
            index_max_bytes: parsed(env, "CAIRN_INDEX_MAX_BYTES", 4usize << 30)?,
            index_poll: millis(env, "CAIRN_INDEX_POLL_MS", 500)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_signing_key_is_refused_without_echoing_it() {
        let err = ApiConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://x"),
            ("CAIRN_JWT_SECRET", "tiny"),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("CAIRN_JWT_SECRET is invalid"), "{err}");
        assert!(!err.contains("tiny"), "{err}");
    }

    #[test]
    fn missing_key_and_bad_limits_are_named() {
        let err = ApiConfig::from_env(&[("CAIRN_DATABASE_URL", "postgres://x")]).unwrap_err();
        assert!(err.to_string().contains("CAIRN_JWT_SECRET is required"));
        let err = ApiConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://x"),
            ("CAIRN_JWT_SECRET", "0123456789abcdef0123456789abcdef"),
            ("CAIRN_MAX_BODY_BYTES", "-1"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("CAIRN_MAX_BODY_BYTES"));
    }

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn the_read_url_is_optional_and_checked_like_the_primary_url() {
        let unset = ApiConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://p/db"),
            ("CAIRN_JWT_SECRET", KEY),
        ])
        .unwrap();
        assert_eq!(unset.database_read_url, None);
        let set = ApiConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://p/db"),
            ("CAIRN_JWT_SECRET", KEY),
            ("CAIRN_DATABASE_READ_URL", "postgresql://replica:5433/db"),
        ])
        .unwrap();
        assert_eq!(
            set.database_read_url.as_deref(),
            Some("postgresql://replica:5433/db")
        );
        let err = ApiConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://p/db"),
            ("CAIRN_JWT_SECRET", KEY),
            ("CAIRN_DATABASE_READ_URL", "mysql://u:hunter2@replica/db"),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("CAIRN_DATABASE_READ_URL is invalid"), "{err}");
        assert!(err.contains("mysql://…"), "{err}");
        assert!(!err.contains("hunter2"), "a URL's password is never shown: {err}");
    }
}
