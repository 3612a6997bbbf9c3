//! Keeping the indexes current from Postgres: building a project's index
//! from its rows, and applying the feed (`store`'s changes since the last
//! horizon) to every indexed project.
//!
//! A build reads a project's rows without holding the follower, so
//! searches of other projects (and their feed reads) go on meanwhile; it
//! takes a horizon before its reads, and before its index is published it
//! replays, under the follower's lock, that project's changes at or past
//! that horizon. Every change is then either in the rows it read, in the
//! replay, or at or past the follower's cursor (the next poll): none falls
//! between a build and the feed.

use std::{
    collections::HashSet,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use uuid::Uuid;

use crate::{
    doc::Doc,
    engine::Engine,
    project::ProjectIndex,
    store::{self, Deletion, Vector},
};

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
    /// Projects to rebuild outside the lock (worn by dead slots, or the feed
    /// was unread too long).
    pub(crate) to_rebuild: HashSet<Uuid>,
}

impl Default for Follower {
    fn default() -> Self {
        Self {
            cursor: None,
            last_started: None,
            last_ok: false,
            last_success: Instant::now(),
            last_prune: None,
            to_rebuild: HashSet::new(),
        }
    }
}

/// A project's index built from its rows, and the horizon taken before them.
pub(crate) async fn build(engine: &Engine, project_id: Uuid) -> anyhow::Result<(ProjectIndex, i64)> {
    let horizon = store::horizon(&engine.pool).await?;
    let mut index = ProjectIndex::default();
    for doc in store::project_docs(&engine.pool, project_id).await? {
        index.upsert(doc);
    }
    if let Some(model) = engine.model() {
        for v in store::project_vectors(&engine.pool, project_id, model).await? {
            index.set_vector(v.id, &v.embedding);
        }
    }
    Ok((index, horizon))
}

/// Applies one read of the feed. Deletions go first: docs and vectors are
/// read as they stand now, so a vector deleted and written again within the
/// read (re-embedded, or its model changed back) must end up set.
fn apply(index: &mut ProjectIndex, docs: Vec<Doc>, vectors: Vec<Vector>, deletions: Vec<Deletion>) {
    for d in deletions {
        forget(index, &d);
    }
    for doc in docs {
        index.upsert(doc);
    }
    for v in vectors {
        index.set_vector(v.id, &v.embedding);
    }
}

fn forget(index: &mut ProjectIndex, d: &Deletion) {
    match d.what.as_str() {
        "observation_vector" | "summary_vector" => index.clear_vector(d.id),
        _ => index.remove(d.id),
    }
}

impl Follower {
    /// Brings a freshly built index up to the feed (its project's changes
    /// at or past `since`); called with the follower locked, just before the
    /// index is published.
    pub(crate) async fn replay(
        &mut self,
        engine: &Engine,
        project_id: Uuid,
        since: i64,
        index: &mut ProjectIndex,
    ) -> anyhow::Result<()> {
        let pool = &engine.pool;
        let docs = store::changed_docs(pool, since, Some(project_id)).await?;
        let vectors = match engine.model() {
            Some(model) => store::changed_vectors(pool, since, model, Some(project_id)).await?,
            None => vec![],
        };
        let deletions = store::deletions(pool, since, Some(project_id)).await?;
        apply(
            index,
            docs.into_iter().map(|(_, d)| d).collect(),
            vectors,
            deletions,
        );
        // Before any poll, the feed starts where this build did.
        self.cursor.get_or_insert(since);
        Ok(())
    }

    /// Reads the feed past the cursor and applies it.
    pub(crate) async fn poll(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.last_started = Some(Instant::now());
        self.last_ok = false;
        let pool = &engine.pool;
        let Some(cursor) = self.cursor else {
            self.cursor = Some(store::horizon(pool).await?);
            self.done();
            return Ok(());
        };
        if self.last_success.elapsed() > DELETIONS_KEPT / 2 {
            tracing::warn!("retrieval feed unread for hours: rebuilding every project");
            self.cursor = Some(store::horizon(pool).await?);
            self.to_rebuild
                .extend(engine.projects.read().expect("lock").keys().copied());
            self.done();
            return Ok(());
        }
        let (horizon, pending) = store::pending(pool, cursor).await?;
        if pending {
            let docs = store::changed_docs(pool, cursor, None).await?;
            let vectors = match engine.model() {
                Some(model) => store::changed_vectors(pool, cursor, model, None).await?,
                None => vec![],
            };
            let deletions = store::deletions(pool, cursor, None).await?;
            let projects = engine.projects.read().expect("lock");
            let mut touched = HashSet::new();
            // Deletions first, as in `apply`.
            for d in &deletions {
                if let Some(index) = projects.get(&d.project_id) {
                    forget(&mut index.write().expect("lock"), d);
                    touched.insert(d.project_id);
                }
            }
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
            for id in touched {
                if let Some(index) = projects.get(&id) {
                    let index = index.read().expect("lock");
                    if index.len() >= REBUILD_MIN_SLOTS && index.dead_share() > 0.25 {
                        self.to_rebuild.insert(id);
                    }
                }
            }
        }
        self.cursor = Some(horizon);
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
}

/// Publishes an index (new, or replacing a worn one).
pub(crate) fn publish(engine: &Engine, project_id: Uuid, index: ProjectIndex) -> Arc<RwLock<ProjectIndex>> {
    let shared = Arc::new(RwLock::new(index));
    engine
        .projects
        .write()
        .expect("lock")
        .insert(project_id, shared.clone());
    shared
}
