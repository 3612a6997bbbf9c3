//! The local model's workers: one thread a core, each taking every request
//! waiting when it comes free and embedding them in one encoder call (group
//! commit, for embeddings). Under load, concurrent searches share one pass
//! over the weights and at most one encoder call runs a core; alone, a
//! request starts at once.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use tokio::sync::oneshot;

use crate::{EmbedError, LocalModel};

/// Requests of at most this many texts in all are joined into one call.
const MAX_TEXTS: usize = 32;

type Reply = oneshot::Sender<Result<Vec<Vec<f32>>, EmbedError>>;

struct Request {
    texts: Vec<String>,
    reply: Reply,
}

pub struct Batcher {
    requests: Sender<Request>,
}

impl Batcher {
    /// Starts `workers` threads over `model`; they stop when the batcher is dropped.
    pub fn start(model: Arc<LocalModel>, workers: usize) -> Result<Self, EmbedError> {
        let (requests, queue) = crossbeam_channel::unbounded();
        for i in 0..workers.max(1) {
            let (model, queue) = (model.clone(), queue.clone());
            std::thread::Builder::new()
                .name(format!("cairn-embed-{i}"))
                .spawn(move || work(&model, &queue))
                .map_err(|e| EmbedError::Task(format!("starting an embedding worker: {e}")))?;
        }
        Ok(Self { requests })
    }

    /// One vector per text, in order, from whichever worker is free first.
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send(Request { texts, reply })
            .map_err(|_| EmbedError::Task("the embedding workers stopped".into()))?;
        answer
            .await
            .map_err(|_| EmbedError::Task("an embedding worker stopped mid-request".into()))?
    }
}

/// Waits for a request, joins every request already queued behind it (up to
/// `MAX_TEXTS` texts), embeds them in one call and answers each its own.
fn work(model: &LocalModel, queue: &Receiver<Request>) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        let mut texts = batch[0].texts.len();
        while texts < MAX_TEXTS {
            match queue.try_recv() {
                Ok(next) => {
                    texts += next.texts.len();
                    batch.push(next);
                }
                Err(_) => break,
            }
        }
        let counts: Vec<usize> = batch.iter().map(|r| r.texts.len()).collect();
        let all: Vec<String> = batch
            .iter_mut()
            .flat_map(|r| std::mem::take(&mut r.texts))
            .collect();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| model.embed(&all)))
            .unwrap_or_else(|_| Err(EmbedError::Model("the encoder panicked".into())));
        match result {
            Ok(mut vectors) => {
                for (request, count) in batch.into_iter().zip(counts) {
                    let rest = vectors.split_off(count);
                    // A caller that stopped waiting is no error.
                    let _ = request.reply.send(Ok(std::mem::replace(&mut vectors, rest)));
                }
            }
            Err(e) => {
                for request in batch {
                    let _ = request.reply.send(Err(EmbedError::Model(e.to_string())));
                }
            }
        }
    }
}
