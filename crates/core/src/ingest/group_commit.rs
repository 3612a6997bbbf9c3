//! Group commit for the one-statement path: tool events that arrive while a
//! batch is being written wait in a queue, and the next batch writes them
//! all in one call, one round trip and one commit
//! (`store::turn_events::insert_many`). Each caller is answered only after
//! the commit that holds its event, so an answered event is durable.
//!
//! Events are queued by session (by hash, among a few shards), and a shard
//! has at most one batch in flight: a session's events are written in the
//! order they arrived, one batch after another, and never wait in Postgres
//! for a turn's job row that this process itself holds. Nothing waits for a
//! timer: a batch is whatever queued while the previous one was written.

use std::{
    hash::{BuildHasher, Hash},
    sync::{Arc, Mutex},
};

use sqlx::PgPool;
use tokio::sync::oneshot;

use crate::{
    error::Error,
    store::turn_events::{self, TurnEvent, TurnEventInput, TurnLimits},
};

/// Batches written at once; sessions spread over them by hash.
const SHARDS: usize = 4;
/// The most events one call writes.
const MAX_BATCH: usize = 128;

type Answer = crate::error::Result<Option<TurnEvent>>;

struct Pending {
    event: TurnEventInput,
    reply: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    /// A task is writing this shard's batches.
    writing: bool,
}

pub struct GroupCommit {
    pool: PgPool,
    limits: TurnLimits,
    shards: Box<[Arc<Mutex<Queue>>]>,
    hasher: std::collections::hash_map::RandomState,
}

impl GroupCommit {
    pub fn new(pool: PgPool, limits: TurnLimits) -> Self {
        Self {
            pool,
            limits,
            shards: (0..SHARDS).map(|_| Default::default()).collect(),
            hasher: Default::default(),
        }
    }

    /// Stores `event` with whatever else is queued for its shard; answers
    /// once the batch holding it has committed.
    pub async fn store(&self, event: TurnEventInput) -> Answer {
        let mut h = self.hasher.build_hasher();
        (event.project_id, &event.agent, &event.external_session_id).hash(&mut h);
        let shard = &self.shards[(std::hash::Hasher::finish(&h) % SHARDS as u64) as usize];
        let (reply, answer) = oneshot::channel();
        let start = {
            let mut queue = lock(shard);
            queue.pending.push(Pending { event, reply });
            !std::mem::replace(&mut queue.writing, true)
        };
        if start {
            tokio::spawn(write_batches(self.pool.clone(), self.limits, shard.clone()));
        }
        answer.await.unwrap_or_else(|_| {
            tracing::error!("the batch writing a tool event stopped before answering");
            Err(Error::internal())
        })
    }
}

fn lock(shard: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    shard.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Marks the shard free should its writer end early (cancelled with the
/// runtime, or a panic); the next event queued starts another.
struct Writing {
    shard: Arc<Mutex<Queue>>,
    finished: bool,
}

impl Drop for Writing {
    fn drop(&mut self) {
        if !self.finished {
            lock(&self.shard).writing = false;
        }
    }
}

/// Writes the shard's queue batch by batch until it is empty.
async fn write_batches(pool: PgPool, limits: TurnLimits, shard: Arc<Mutex<Queue>>) {
    let mut writing = Writing {
        shard,
        finished: false,
    };
    loop {
        let batch: Vec<Pending> = {
            let mut queue = lock(&writing.shard);
            if queue.pending.is_empty() {
                // Under the same lock as the check: an event queued after
                // this starts a writer of its own.
                queue.writing = false;
                writing.finished = true;
                return;
            }
            let n = queue.pending.len().min(MAX_BATCH);
            queue.pending.drain(..n).collect()
        };
        write(&pool, limits, batch).await;
    }
}

/// One call for the batch. Should Postgres refuse it, each event is written
/// alone, so that one event it refuses does not fail the others with it;
/// should the database be away (no connection, a connection cut, a server
/// shutting down), every event gets that answer at once.
async fn write(pool: &PgPool, limits: TurnLimits, batch: Vec<Pending>) {
    metrics::histogram!(cairn_telemetry::names::INGEST_BATCH_EVENTS).record(batch.len() as f64);
    let (events, replies): (Vec<_>, Vec<_>) = batch.into_iter().map(|p| (p.event, p.reply)).unzip();
    match turn_events::insert_many(pool, limits, &events).await {
        Ok(answers) => {
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(Ok(answer));
            }
        }
        Err(err) if events.len() > 1 && refused(&err) => {
            tracing::warn!(error = %err, events = events.len(), "batch of tool events refused; writing each alone");
            for (event, reply) in events.into_iter().zip(replies) {
                let answer = turn_events::insert_many(pool, limits, std::slice::from_ref(&event))
                    .await
                    .map(|mut answers| answers.pop().flatten())
                    .map_err(Error::from);
                let _ = reply.send(answer);
            }
        }
        Err(err) => {
            let err = Error::from(err);
            for reply in replies {
                let _ = reply.send(Err(err.clone()));
            }
        }
    }
}

/// Postgres refused the statement (one event's data, a deadlock), as
/// opposed to a database that cannot be reached or is going away.
fn refused(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => !db
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57")),
        _ => false,
    }
}
