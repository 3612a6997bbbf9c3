//! Retrieval counts gathered in memory and written together. Each search
//! hit and each injected observation counts once (`store::retrievals`);
//! the counts of every read in a `FLUSH_EVERY` go to Postgres in one
//! statement, not one transaction (and one commit) per read. Counts are a
//! ranking and retention signal, never what a reader waits for: a read
//! never blocks on them. A server writes what it holds when it shuts down
//! (`flush`); the counts of the last interval are lost when it dies.

use std::{collections::HashMap, time::Duration};

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// How often gathered counts are written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Distinct memories gathered before a write comes early.
const FLUSH_AT: usize = 4096;
/// Reads queued for the writer; beyond, a read's counts are dropped.
const QUEUE: usize = 4096;

/// The handle reads count through; the writer task ends, after a last
/// write, when every handle is gone.
pub struct RetrievalLog {
    tx: mpsc::Sender<Message>,
}

enum Message {
    /// One read's memories, of one project.
    Read(Uuid, Vec<Uuid>),
    /// Write what is held now, then answer.
    Flush(oneshot::Sender<()>),
}

impl RetrievalLog {
    /// Starts the writer on the current runtime.
    pub fn start(pool: PgPool) -> RetrievalLog {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write(pool, rx));
        RetrievalLog { tx }
    }

    /// Counts one retrieval of each of `ids` (observations of the project;
    /// others are ignored when written).
    pub fn record(&self, project_id: Uuid, ids: Vec<Uuid>) {
        if ids.is_empty() {
            return;
        }
        if self.tx.try_send(Message::Read(project_id, ids)).is_err() {
            tracing::debug!(%project_id, "retrieval counts dropped: the writer is behind");
        }
    }

    /// Writes every count recorded before the call; returns when they are
    /// in Postgres (or their write failed and was logged).
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = written.await;
        }
    }
}

async fn write(pool: PgPool, mut rx: mpsc::Receiver<Message>) {
    let mut counts: HashMap<(Uuid, Uuid), i32> = HashMap::new();
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            read = rx.recv() => match read {
                Some(Message::Read(project_id, ids)) => {
                    for id in ids {
                        *counts.entry((project_id, id)).or_default() += 1;
                    }
                    if counts.len() >= FLUSH_AT {
                        flush(&pool, &mut counts).await;
                    }
                }
                Some(Message::Flush(done)) => {
                    flush(&pool, &mut counts).await;
                    let _ = done.send(());
                }
                None => {
                    flush(&pool, &mut counts).await;
                    return;
                }
            },
            _ = tick.tick() => flush(&pool, &mut counts).await,
        }
    }
}

async fn flush(pool: &PgPool, counts: &mut HashMap<(Uuid, Uuid), i32>) {
    if counts.is_empty() {
        return;
    }
    let rows: Vec<(Uuid, Uuid, i32)> = counts.drain().map(|((p, id), n)| (p, id, n)).collect();
    if let Err(e) = crate::store::retrievals::record_counts(pool, &rows).await {
        tracing::warn!(error = %e, rows = rows.len(), "writing retrieval counts failed");
    }
}
