//! The engine's handle: what every path that stores or finds memory shares —
//! the database, the privacy filter, how events group into turns, the
//! embedder and the retrieval index — and where due jobs are announced.
//! The server keeps one per process (inside its `AppState`); an embedding
//! program gets one from [`crate::Cairn`]. Reads that may lag behind the
//! primary (search, context, dashboard listings) go to `read_pool`: a read
//! replica when the server is given one, else the primary pool itself.

use std::sync::Arc;

use cairn_shared::{jobs::Transport, privacy::PrivacyFilter};
use futures::future::BoxFuture;
use sqlx::PgPool;
use uuid::Uuid;

use crate::ingest::Coalescing;

/// Told after commit which jobs became due.
pub trait Wake: Send + Sync {
    fn wake<'a>(&'a self, job: Uuid) -> BoxFuture<'a, Transport>;
}

/// No one to tell: the job waits in Postgres for whoever claims it (an
/// embedding program's inline generation, or a generator's sweep).
pub struct NoWake;

impl Wake for NoWake {
    fn wake<'a>(&'a self, _: Uuid) -> BoxFuture<'a, Transport> {
        Box::pin(async { Transport::QueuedOnly })
    }
}

/// How the engine is set up.
pub struct Options {
    pub privacy: PrivacyFilter,
    pub coalescing: Coalescing,
    /// The query and memory embedder; `None` for words only.
    pub embedder: Option<cairn_embed::Embedder>,
    /// The index's memory bound and how often it follows the database.
    pub retrieval: cairn_retrieval::Config,
    /// Index every project of the database at start and follow the
    /// database in the background (the server). Off: a project is indexed
    /// at its first search and each search reads what changed first (an
    /// embedding program, which never holds another project's memories).
    pub index_everything: bool,
    pub wake: Arc<dyn Wake>,
}

pub struct Engine {
    /// The primary: every write, and every read that must see the latest
    /// write (auth, ingest, idempotent duplicates, a row just written).
    pub pool: PgPool,
    /// Lag-tolerant reads (search's rows, the context builders' gathering,
    /// timelines): a streaming replica with [`Engine::with_read_pool`], else
    /// a clone of `pool` (the same connections).
    pub read_pool: PgPool,
    pub privacy: PrivacyFilter,
    pub coalescing: Coalescing,
    /// Tool events of known sessions, written in batches (`ingest/group_commit.rs`).
    pub group_commit: crate::ingest::GroupCommit,
    /// `None` when embeddings are off or the model is missing: search and
    /// context are then by words only.
    pub embedder: Option<cairn_embed::Embedder>,
    /// The retrieval engine every path that finds memory asks.
    pub retrieval: Arc<cairn_retrieval::Engine>,
    /// Counts the memories reads return, written in batches.
    pub retrievals: crate::memory::retrievals::RetrievalLog,
    pub wake: Arc<dyn Wake>,
    /// The index's follower, stopped with the engine.
    follower: Option<tokio::task::AbortHandle>,
}

impl Engine {
    /// With `index_everything`, starts the retrieval index's follower.
    /// Starts the retrieval counts' writer: call it inside a Tokio runtime.
    pub fn new(pool: PgPool, options: Options) -> Self {
        let retrieval = cairn_retrieval::Engine::new(pool.clone(), options.retrieval);
        let follower = options.index_everything.then(|| retrieval.start().abort_handle());
        let group_commit = crate::ingest::GroupCommit::new(
            pool.clone(),
            crate::store::turn_events::TurnLimits {
                max_turn_events: options.coalescing.max_turn_events,
                turn_idle: options.coalescing.turn_idle,
            },
        );
        let retrievals = crate::memory::retrievals::RetrievalLog::start(pool.clone());
        Self {
            retrievals,
            read_pool: pool.clone(),
            pool,
            privacy: options.privacy,
            coalescing: options.coalescing,
            group_commit,
            embedder: options.embedder,
            retrieval,
            wake: options.wake,
            follower,
        }
    }
}

impl Engine {
    /// Sends lag-tolerant reads to `read_pool` (a read replica of `pool`).
    /// The retrieval index keeps following the primary.
    pub fn with_read_pool(mut self, read_pool: PgPool) -> Self {
        self.read_pool = read_pool;
        self
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(follower) = &self.follower {
            follower.abort();
        }
    }
}
