//! Opening the embedded engine: a pool, the schema migrated in-process
//! (idempotent, and safe beside the server's own migrations on the same
//! database: sqlx holds an advisory lock while it migrates), the tenant, the
//! provider and the embedding model.

use std::{path::PathBuf, sync::Arc, time::Duration};

use cairn_shared::{
    config::{Env, ProcessEnv},
    db,
    privacy::{PrivacyConfig, PrivacyFilter},
};
use sqlx::{PgPool, postgres::PgPoolOptions};

use super::{Cairn, tenant};
use crate::{
    engine::{Engine, NoWake},
    error::Error,
    generation::{
        Generator, Settings,
        notices::NoNotices,
        prompt::Budget,
        provider::{Provider, ProviderConfig, build_provider},
        retry::RetryPolicy,
    },
    ingest::Coalescing,
    tenancy::ProjectRef,
};

/// What [`Cairn::with_options`] may be given; [`Options::from_env`] reads
/// the server's variables.
pub struct Options {
    /// The project every call acts on; `None`: the default one (`tenant`).
    pub project: Option<ProjectRef>,
    /// Where the default tenant's file is kept (`CAIRN_DATA_DIR`).
    pub data_dir: PathBuf,
    /// The model that writes memories: `CAIRN_PROVIDER` (`heuristic`, the
    /// offline default, `anthropic` or `openai`) and its settings.
    pub provider: Arc<dyn Provider>,
    pub max_output_tokens: u32,
    /// `CAIRN_EMBED_*`: the embedding model; `None` for words only.
    pub embedder: Option<cairn_embed::Embedder>,
    pub coalescing: Coalescing,
}

impl Options {
    /// `CAIRN_DATA_DIR`, `CAIRN_PROVIDER` (and its keys), `CAIRN_EMBED_*`.
    pub fn from_env() -> Result<Self, Error> {
        let provider = ProviderConfig::from_env(&ProcessEnv as &dyn Env)
            .map_err(|e| Error::bad_request("invalid_config", e.to_string()))?;
        Ok(Self {
            project: None,
            data_dir: tenant::data_dir(),
            provider: build_provider(&provider)
                .map_err(|e| Error::bad_request("invalid_config", e.to_string()))?,
            max_output_tokens: provider.max_output_tokens(),
            embedder: cairn_embed::Embedder::from_config(&cairn_embed::EmbedConfig::from_env()),
            coalescing: Coalescing::default(),
        })
    }
}

impl Cairn {
    /// Connects to `database_url`, migrates the schema and opens the
    /// default project, with the settings of [`Options::from_env`].
    pub async fn connect(database_url: &str) -> Result<Cairn, Error> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect(database_url)
            .await?;
        Cairn::with_pool(pool).await
    }

    /// [`Cairn::connect`] on a pool of the program's own.
    pub async fn with_pool(pool: PgPool) -> Result<Cairn, Error> {
        Cairn::with_options(pool, Options::from_env()?).await
    }

    pub async fn with_options(pool: PgPool, options: Options) -> Result<Cairn, Error> {
        db::run_migrations(&pool).await?;
        let project = match options.project {
            Some(project) => project,
            None => tenant::default_project(&pool, &options.data_dir).await?,
        };
        let retrieval = cairn_retrieval::Config {
            max_bytes: 1 << 30,
            poll_interval: Duration::from_millis(500),
            model: options.embedder.as_ref().map(|e| e.model().to_string()),
        };
        let engine = Engine::new(
            pool.clone(),
            crate::engine::Options {
                privacy: PrivacyFilter::new(PrivacyConfig::default()),
                coalescing: options.coalescing,
                embedder: options.embedder.clone(),
                retrieval,
                index_everything: false,
                wake: Arc::new(NoWake),
            },
        );
        let generator = Generator {
            pool,
            provider: options.provider,
            embedder: options.embedder,
            settings: Settings {
                budget: Budget::default(),
                retry: RetryPolicy::default(),
                max_output_tokens: options.max_output_tokens,
                lease: Duration::from_secs(300),
            },
            notices: Arc::new(NoNotices),
        };
        Ok(Cairn {
            engine: Arc::new(engine),
            generator,
            project,
            worker: format!("embedded:{}", std::process::id()),
        })
    }
}
