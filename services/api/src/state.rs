//! What every handler shares.

use std::sync::Arc;

use cairn_shared::{auth::TokenSigner, privacy::PrivacyFilter};
use cairn_wakeup::WakeupPublisher;
use sqlx::PgPool;

use crate::{auth::TokenCache, config::ApiConfig, middleware::rate_limit::RateLimiter};

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub pool: PgPool,
    pub config: ApiConfig,
    pub signer: TokenSigner,
    pub tokens: TokenCache,
    pub privacy: PrivacyFilter,
    pub wakeups: WakeupPublisher,
    pub rate_limiter: RateLimiter,
    /// The query embedder; `None` when embeddings are off or the model is
    /// missing (search and context are then full-text only).
    pub embedder: Option<cairn_embed::Embedder>,
    /// Live notices: the process's Redis subscription and its per-project fan-out.
    pub live: crate::live::Hub,
    /// The model that answers asks (`crate::ask`).
    pub ask_provider: Arc<dyn cairn_core::generation::provider::Provider>,
    /// The retrieval engine every path that finds memory asks.
    pub retrieval: Arc<cairn_retrieval::Engine>,
    /// The index's follower, stopped with the state.
    retrieval_task: tokio::task::AbortHandle,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.retrieval_task.abort();
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
        let rate_limiter = RateLimiter::new(&config.rate_limits);
        let embedder = cairn_embed::Embedder::from_config(&config.embed);
        let live = crate::live::Hub::start(&config.store.redis_url, config.limits.wakeup_timeout)?;
        let ask_provider = cairn_core::generation::provider::build_provider(&config.provider)?;
        let retrieval = cairn_retrieval::Engine::new(
            pool.clone(),
            cairn_retrieval::Config {
                max_bytes: config.index_max_bytes,
                poll_interval: config.index_poll,
                model: embedder.as_ref().map(|e| e.model().to_string()),
            },
        );
        // Built from Postgres and followed in the background; a search of a
        // project not indexed yet indexes it first.
        let retrieval_task = retrieval.start().abort_handle();
        Ok(Self(Arc::new(Inner {
            pool,
            config,
            signer,
            tokens,
            privacy,
            wakeups,
            rate_limiter,
            embedder,
            live,
            ask_provider,
            retrieval,
            retrieval_task,
        })))
    }
}
