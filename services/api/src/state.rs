//! What every handler shares.

use std::sync::Arc;

use cairn_core::engine::{Engine, Options, Wake};
use cairn_shared::jobs::Transport;
use cairn_shared::{auth::TokenSigner, privacy::PrivacyFilter};
use cairn_wakeup::WakeupPublisher;
use futures::future::BoxFuture;
use sqlx::PgPool;
use uuid::Uuid;

use crate::{auth::TokenCache, config::ApiConfig, middleware::rate_limit::RateLimiter};

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// The engine (pool and read pool, privacy filter, embedder, retrieval
/// index) and what only the HTTP service needs. Fields of the engine read
/// through it (`state.pool`, `state.read_pool`).
pub struct Inner {
    pub engine: Engine,
    pub config: ApiConfig,
    pub signer: TokenSigner,
    pub tokens: TokenCache,
    pub wakeups: WakeupPublisher,
    pub rate_limiter: RateLimiter,
    /// Live notices: the process's Redis subscription and its per-project fan-out.
    pub live: crate::live::Hub,
    /// The model that answers asks (`crate::ask`).
    pub ask_provider: Arc<dyn cairn_core::generation::provider::Provider>,
    /// The identity provider, when single sign-on is configured.
    pub oidc: Option<crate::auth::oidc::Provider>,
}

impl std::ops::Deref for Inner {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

/// Due jobs get a Redis wake-up.
struct RedisWake(WakeupPublisher);

impl Wake for RedisWake {
    fn wake<'a>(&'a self, job: Uuid) -> BoxFuture<'a, Transport> {
        Box::pin(self.0.publish(job))
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(pool: PgPool, config: ApiConfig) -> anyhow::Result<Self> {
        let signer = TokenSigner::new(&config.signing_key);
        let privacy = PrivacyFilter::new(cairn_shared::privacy::PrivacyConfig {
            skip_tools: config.skip_tools.clone(),
            max_field_bytes: config.limits.max_field_bytes,
        });
        privacy.warm();
        let wakeups = WakeupPublisher::new(&config.store.redis_url, config.limits.wakeup_timeout)?;
        let tokens = TokenCache::new(config.auth_cache_ttl, config.rate_limits.bad_token_ttl);
        let shared_limits =
            cairn_wakeup::redis_conn::lazy_connection(&config.store.redis_url, config.limits.wakeup_timeout)
                .ok()
                .map(|conn| (conn, config.limits.wakeup_timeout));
        let rate_limiter = RateLimiter::new(&config.rate_limits, &config.store.database_url, shared_limits);
        let embedder = cairn_embed::Embedder::from_config(&config.embed);
        let live = crate::live::Hub::start(&config.store.redis_url, config.limits.wakeup_timeout)?;
        let ask_provider = cairn_core::generation::provider::build_provider(&config.provider)?;
        // The index is built from Postgres and followed in the background; a
        // search of a project not indexed yet indexes it first.
        let retrieval = cairn_retrieval::Config {
            max_bytes: config.index_max_bytes,
            poll_interval: config.index_poll,
            model: embedder.as_ref().map(|e| e.model().to_string()),
        };
        // Lag-tolerant reads go to the replica when there is one.
        let read_pool = match &config.database_read_url {
            Some(url) => cairn_shared::db::connect_replica(&config.store, url, "CAIRN_DATABASE_READ_URL")?,
            None => pool.clone(),
        };
        let engine = Engine::new(
            pool,
            Options {
                privacy,
                coalescing: config.coalescing.clone(),
                embedder,
                retrieval,
                index_everything: true,
                wake: Arc::new(RedisWake(wakeups.clone())),
            },
        )
        .with_read_pool(read_pool);
        let oidc = config.oidc.clone().map(crate::auth::oidc::Provider::new);
        Ok(Self(Arc::new(Inner {
            engine,
            oidc,
            config,
            signer,
            tokens,
            wakeups,
            rate_limiter,
            live,
            ask_provider,
        })))
    }
}
