//! Keeping the indexes current from Postgres: building a project's index
//! from its rows, and applying the feed (`store`'s changes since the last
//! horizon) to every indexed project. One follower per engine, behind a
//! lock: a build and a poll never interleave, so no change can fall
//! between a project's build and its first poll.

use std::{
    collections::HashSet,
    time::{Duration, Instant},
};

use uuid::Uuid;

use crate::{engine::Engine, project::ProjectIndex, store};

/// Deletions kept in the feed; a replica that could not poll for half of
/// it rebuilds every project instead of trusting the feed.
pub const DELETIONS_KEPT: Duration = Duration::from_secs(24 * 3600);
const PRUNE_EVERY: Duration = Duration::from_secs(600);
/// A project this large whose slots are over a quarter dead is rebuilt.
const REBUILD_MIN_SLOTS: usize = 1_000;

pub struct Follower {
    cursor: Option<i64>,
    pub(crate) last_started: Option<Instant>,
    pub(crate) last_ok: bool,
    last_success: Instant,
    last_prune: Option<Instant>,
}

impl Default for Follower {
    fn default() -> Self {
        Self {
            cursor: None,
            last_started: None,
            last_ok: false,
            last_success: Instant::now(),
            last_prune: None,
        }
    }
}

impl Follower {
    /// A project's index built from its rows now.
    pub(crate) async fn build(&mut self, engine: &Engine, project_id: Uuid) -> anyhow::Result<ProjectIndex> {
        if self.cursor.is_none() {
            // Taken before the rows are read: what they miss, the next poll reads.
            self.cursor = Some(store::horizon(&engine.pool).await?);
        }
        let mut index = ProjectIndex::default();
        for doc in store::project_docs(&engine.pool, project_id).await? {
            index.upsert(doc);
        }
        if let Some(model) = engine.model() {
            for v in store::project_vectors(&engine.pool, project_id, model).await? {
                index.set_vector(v.id, &v.embedding);
            }
        }
        Ok(index)
    }

    /// Reads the feed past the cursor and applies it.
    pub(crate) async fn poll(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.last_started = Some(Instant::now());
        self.last_ok = false;
        let pool = &engine.pool;
        let horizon = store::horizon(pool).await?;
        let Some(cursor) = self.cursor else {
            self.cursor = Some(horizon);
            self.done();
            return Ok(());
        };
        if self.last_success.elapsed() > DELETIONS_KEPT / 2 {
            tracing::warn!("retrieval feed unread for hours: rebuilding every project");
            self.cursor = Some(horizon);
            let ids: Vec<Uuid> = engine.projects.read().expect("lock").keys().copied().collect();
            self.rebuild(engine, &ids).await?;
            self.done();
            return Ok(());
        }
        let docs = store::changed_docs(pool, cursor).await?;
        let vectors = match engine.model() {
            Some(model) => store::changed_vectors(pool, cursor, model).await?,
            None => vec![],
        };
        let deletions = store::deletions(pool, cursor).await?;
        let mut touched: HashSet<Uuid> = HashSet::new();
        {
            let projects = engine.projects.read().expect("lock");
            for (project_id, doc) in docs {
                if let Some(index) = projects.get(&project_id) {
                    index.write().expect("lock").upsert(doc);
                    touched.insert(project_id);
                }
            }
            for v in vectors {
                if let Some(index) = projects.get(&v.project_id) {
                    index.write().expect("lock").set_vector(v.id, &v.embedding);
                }
            }
            for d in deletions {
                if let Some(index) = projects.get(&d.project_id) {
                    let mut index = index.write().expect("lock");
                    match d.what.as_str() {
                        "observation_vector" | "summary_vector" => index.clear_vector(d.id),
                        _ => index.remove(d.id),
                    }
                    touched.insert(d.project_id);
                }
            }
        }
        self.cursor = Some(horizon);
        let worn: Vec<Uuid> = {
            let projects = engine.projects.read().expect("lock");
            touched
                .iter()
                .filter(|id| {
                    projects.get(id).is_some_and(|i| {
                        let i = i.read().expect("lock");
                        i.len() >= REBUILD_MIN_SLOTS && i.dead_share() > 0.25
                    })
                })
                .copied()
                .collect()
        };
        self.rebuild(engine, &worn).await?;
        if self.last_prune.is_none_or(|t| t.elapsed() > PRUNE_EVERY) {
            self.last_prune = Some(Instant::now());
            store::prune_deletions(pool, DELETIONS_KEPT).await?;
        }
        self.done();
        Ok(())
    }

    fn done(&mut self) {
        self.last_ok = true;
        self.last_success = Instant::now();
    }

    async fn rebuild(&mut self, engine: &Engine, ids: &[Uuid]) -> anyhow::Result<()> {
        for id in ids {
            let index = self.build(engine, *id).await?;
            engine
                .projects
                .write()
                .expect("lock")
                .insert(*id, std::sync::Arc::new(std::sync::RwLock::new(index)));
        }
        Ok(())
    }
}
