//! The engine: every project's index in memory, kept current from
//! Postgres (`follow`), searched by the one query model (`query`).
//!
//! A project is indexed when the engine starts (all of them, in the
//! background) or when it is first searched, whichever comes first, unless
//! the indexes already hold `max_bytes`: such a project is answered by the
//! caller's Postgres statement instead (`search` gives `None`), and the
//! refusal is counted. Before answering, a search waits for one poll of the
//! feed that began after it did (shared by every search waiting then), so
//! a memory committed before the search is always found, on every replica.
//! Builds take no lock a search of another project needs (`follow`).

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use moka::sync::Cache;
use sqlx::PgPool;
use uuid::Uuid;

use crate::{
    follow::{self, Follower},
    project::ProjectIndex,
    query::{Hit, Query},
    store,
};

#[derive(Clone, Debug)]
pub struct Config {
    /// The indexes stop taking new projects past this many bytes.
    pub max_bytes: usize,
    /// How often the feed is polled when nobody searches.
    pub poll_interval: Duration,
    /// The embedding model whose vectors are indexed; `None`: words only.
    pub model: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_bytes: 4 << 30,
            poll_interval: Duration::from_millis(500),
            model: None,
        }
    }
}

/// What the engine holds, for metrics and health.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub projects: usize,
    pub memories: usize,
    pub vectors: usize,
    pub bytes: usize,
    pub max_bytes: usize,
    /// Projects refused for the memory bound (answered from Postgres).
    pub refused: usize,
}

pub type Shared = Arc<RwLock<ProjectIndex>>;

pub struct Engine {
    pub(crate) pool: PgPool,
    pub(crate) config: Config,
    pub(crate) projects: RwLock<HashMap<Uuid, Shared>>,
    pub(crate) refused: RwLock<std::collections::HashSet<Uuid>>,
    pub(crate) follower: tokio::sync::Mutex<Follower>,
    /// One build at a time (a search of a project being built waits for it).
    builds: tokio::sync::Mutex<()>,
    query_vectors: Cache<String, Arc<Vec<f32>>>,
}

impl Engine {
    pub fn new(pool: PgPool, config: Config) -> Arc<Engine> {
        Arc::new(Engine {
            pool,
            config,
            projects: RwLock::default(),
            refused: RwLock::default(),
            follower: tokio::sync::Mutex::new(Follower::default()),
            builds: tokio::sync::Mutex::new(()),
            query_vectors: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(Duration::from_secs(3600))
                .build(),
        })
    }

    pub fn model(&self) -> Option<&str> {
        self.config.model.as_deref()
    }

    /// Indexes every project, then follows the feed until the process
    /// ends. Searches do not wait for it: a project not indexed yet is
    /// indexed by its first search.
    pub fn start(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let engine = self.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            match engine.index_all().await {
                Ok(n) => tracing::info!(
                    projects = n,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    stats = ?engine.stats(),
                    "retrieval index built from Postgres"
                ),
                Err(e) => tracing::warn!(error = %format!("{e:#}"), "retrieval index not built yet"),
            }
            for round in 0u64.. {
                tokio::time::sleep(engine.config.poll_interval).await;
                if let Err(e) = engine.catch_up().await {
                    tracing::warn!(error = %format!("{e:#}"), "retrieval feed not read");
                }
                if let Err(e) = engine.rebuild_worn().await {
                    tracing::warn!(error = %format!("{e:#}"), "retrieval index not rebuilt");
                }
                if round % 20 == 0 {
                    engine.report();
                }
            }
        })
    }

    /// Indexes every project not indexed yet; how many there are.
    pub async fn index_all(&self) -> anyhow::Result<usize> {
        self.catch_up().await?;
        let ids = store::projects(&self.pool).await?;
        for id in &ids {
            self.project(*id).await?;
        }
        Ok(ids.len())
    }

    /// The project's index, built now if it is not yet; `None` when the
    /// memory bound refuses it.
    pub async fn project(&self, project_id: Uuid) -> anyhow::Result<Option<Shared>> {
        if let Some(index) = self.loaded(project_id) {
            return Ok(Some(index));
        }
        let _build = self.builds.lock().await;
        // Built by another search while this one waited?
        if let Some(index) = self.loaded(project_id) {
            return Ok(Some(index));
        }
        if self.stats().bytes >= self.config.max_bytes {
            let first = self.refused.write().expect("lock").insert(project_id);
            if first {
                tracing::warn!(%project_id, max_bytes = self.config.max_bytes,
                    "retrieval index full: project answered from Postgres (CAIRN_INDEX_MAX_BYTES)");
            }
            return Ok(None);
        }
        let shared = self.build_and_publish(project_id).await?;
        self.refused.write().expect("lock").remove(&project_id);
        Ok(Some(shared))
    }

    /// Builds a project's index from its rows (no lock held), replays its
    /// changes since under the follower's lock, and publishes it.
    async fn build_and_publish(&self, project_id: Uuid) -> anyhow::Result<Shared> {
        let (mut index, since) = follow::build(self, project_id).await?;
        let mut follower = self.follower.lock().await;
        follower.replay(self, project_id, since, &mut index).await?;
        Ok(follow::publish(self, project_id, index))
    }

    /// Rebuilds the projects the follower found worn (many dead slots), one
    /// at a time, while searches go on against the old index.
    pub async fn rebuild_worn(&self) -> anyhow::Result<()> {
        let worn: Vec<Uuid> = std::mem::take(&mut self.follower.lock().await.to_rebuild)
            .into_iter()
            .collect();
        for project_id in worn {
            let _build = self.builds.lock().await;
            self.build_and_publish(project_id).await?;
        }
        Ok(())
    }

    fn loaded(&self, project_id: Uuid) -> Option<Shared> {
        self.projects.read().expect("lock").get(&project_id).cloned()
    }

    /// Reads the feed once, unless a read that began after this call did
    /// completes first (concurrent callers share one).
    pub async fn catch_up(&self) -> anyhow::Result<()> {
        let asked = Instant::now();
        let mut follower = self.follower.lock().await;
        if follower.last_started.is_some_and(|t| t >= asked) && follower.last_ok {
            return Ok(());
        }
        follower.poll(self).await
    }

    /// The query's hits, best first; `None` when the project cannot be
    /// indexed (the memory bound), for the caller to answer otherwise.
    pub async fn search(&self, query: &Query<'_>) -> anyhow::Result<Option<Vec<Hit>>> {
        self.catch_up().await?;
        let Some(index) = self.project(query.project_id).await? else {
            return Ok(None);
        };
        // A few milliseconds of CPU at 100,000 memories (bench/README.md).
        let hits = index.read().expect("lock").search(query);
        Ok(Some(hits))
    }

    /// A query's embedding, from the cache or made now.
    pub async fn embed_query(
        &self,
        embedder: &cairn_embed::Embedder,
        text: &str,
    ) -> Result<Arc<Vec<f32>>, cairn_embed::EmbedError> {
        let key = format!("{}\u{0}{text}", embedder.model());
        if let Some(v) = self.query_vectors.get(&key) {
            return Ok(v);
        }
        let v = Arc::new(embedder.embed_query(text).await?);
        self.query_vectors.insert(key, v.clone());
        Ok(v)
    }

    /// The stats as gauges (`/metrics`).
    pub fn report(&self) {
        let s = self.stats();
        metrics::gauge!("cairn_retrieval_index_bytes").set(s.bytes as f64);
        metrics::gauge!("cairn_retrieval_index_max_bytes").set(s.max_bytes as f64);
        metrics::gauge!("cairn_retrieval_index_memories").set(s.memories as f64);
        metrics::gauge!("cairn_retrieval_index_vectors").set(s.vectors as f64);
        metrics::gauge!("cairn_retrieval_index_projects").set(s.projects as f64);
        metrics::gauge!("cairn_retrieval_index_refused_projects").set(s.refused as f64);
    }

    pub fn stats(&self) -> Stats {
        let projects = self.projects.read().expect("lock");
        let mut stats = Stats {
            projects: projects.len(),
            max_bytes: self.config.max_bytes,
            refused: self.refused.read().expect("lock").len(),
            ..Default::default()
        };
        for index in projects.values() {
            let index = index.read().expect("lock");
            stats.memories += index.len();
            stats.vectors += index.vectors();
            stats.bytes += index.bytes();
        }
        stats
    }

    /// A project's index as it is now, and one built afresh from Postgres:
    /// the two must hold the same memories, attributes and vectors.
    pub async fn compare_with_rebuild(
        &self,
        project_id: Uuid,
    ) -> anyhow::Result<(Vec<crate::project::Entry>, Vec<crate::project::Entry>)> {
        self.catch_up().await?;
        let live = match self.project(project_id).await? {
            Some(index) => index.read().expect("lock").snapshot(),
            None => vec![],
        };
        let (rebuilt, _) = follow::build(self, project_id).await?;
        Ok((live, rebuilt.snapshot()))
    }
}
