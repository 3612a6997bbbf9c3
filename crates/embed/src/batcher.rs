//! The local model's workers: one thread a core, each taking every request
//! waiting when it comes free and embedding them in one encoder call (group
//! commit, for embeddings). Under load, concurrent searches share one pass
//! over the weights and at most one encoder call runs a core; alone, a
//! request starts at once. A request whose caller has stopped waiting (a
//! deadline passed) is dropped unembedded.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::{Receiver, Sender};
use tokio::sync::oneshot;

use crate::{EmbedError, LocalModel, Precision};

/// Requests of at most this many texts in all are joined into one call.
const MAX_TEXTS: usize = 32;

type Reply = oneshot::Sender<Result<Vec<Vec<f32>>, EmbedError>>;

struct Request {
    texts: Vec<String>,
    /// The most windows of each text read (`LocalModel::embed_windows`).
    windows: usize,
    reply: Reply,
}

pub struct Batcher {
    requests: Sender<Request>,
    /// Texts the workers have embedded.
    embedded: Arc<AtomicU64>,
    model: Arc<LocalModel>,
}

impl Batcher {
    /// Starts `workers` threads over `model`; they stop when the batcher is dropped.
    pub fn start(model: Arc<LocalModel>, workers: usize) -> Result<Self, EmbedError> {
        let (requests, queue) = crossbeam_channel::unbounded();
        let embedded = Arc::new(AtomicU64::new(0));
        for i in 0..workers.max(1) {
            let (model, queue, counter) = (model.clone(), queue.clone(), embedded.clone());
            std::thread::Builder::new()
                .name(format!("cairn-embed-{i}"))
                .spawn(move || work(&model, &queue, &counter))
                .map_err(|e| EmbedError::Task(format!("starting an embedding worker: {e}")))?;
        }
        Ok(Self {
            requests,
            embedded,
            model,
        })
    }

    /// The precision the model runs in.
    pub fn precision(&self) -> Precision {
        self.model.precision()
    }

    /// The model the workers run, for what needs its tokenizer alone.
    pub fn model(&self) -> &Arc<LocalModel> {
        &self.model
    }

    /// Texts the workers have embedded since they started.
    pub fn texts_embedded(&self) -> u64 {
        self.embedded.load(Ordering::Relaxed)
    }

    /// One vector per text, in order, from whichever worker is free first,
    /// each read in at most `windows` windows.
    pub async fn embed(&self, texts: Vec<String>, windows: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send(Request {
                texts,
                windows,
                reply,
            })
            .map_err(|_| EmbedError::Task("the embedding workers stopped".into()))?;
        answer
            .await
            .map_err(|_| EmbedError::Task("an embedding worker stopped mid-request".into()))?
    }
}

/// Waits for a request, joins every request already queued behind it (up to
/// `MAX_TEXTS` texts), embeds them in one call and answers each its own.
/// Requests nobody waits for any more are left out.
fn work(model: &LocalModel, queue: &Receiver<Request>, embedded: &AtomicU64) {
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
        batch.retain(|r| !r.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        let counts: Vec<usize> = batch.iter().map(|r| r.texts.len()).collect();
        let windows: Vec<usize> = batch
            .iter()
            .flat_map(|r| std::iter::repeat_n(r.windows, r.texts.len()))
            .collect();
        let all: Vec<String> = batch
            .iter_mut()
            .flat_map(|r| std::mem::take(&mut r.texts))
            .collect();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| model.embed_windows(&all, &windows)))
            .unwrap_or_else(|_| Err(EmbedError::Model("the encoder panicked".into())));
        embedded.fetch_add(all.len() as u64, Ordering::Relaxed);
        match result {
            Ok(mut vectors) => {
                for (request, count) in batch.into_iter().zip(counts) {
                    let rest = vectors.split_off(count);
                    // A caller that stopped waiting is no error.
                    let _ = request.reply.send(Ok(std::mem::replace(&mut vectors, rest)));
                }
            }
            Err(e) => {
                // Every request of the batch gets the encoder's error as it is.
                for request in batch {
                    let _ = request.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_request_whose_caller_gave_up_is_not_embedded() {
        let dir = crate::model_dir();
        assert!(
            dir.join("model.safetensors").is_file(),
            "no model in {} (run scripts/fetch-model.sh)",
            dir.display()
        );
        let batcher = Batcher::start(Arc::new(LocalModel::load(&dir).unwrap()), 1).unwrap();
        let long = "the deploy pipeline failed because the registry secret expired ".repeat(30);
        // Keeps the one worker busy for a while (8 texts of 256 tokens: about a second).
        let (reply, busy) = oneshot::channel();
        let texts = vec![long; 8];
        batcher
            .requests
            .send(Request {
                texts,
                windows: 1,
                reply,
            })
            .unwrap();
        // Once the worker has taken it, and has had time to look for more to join it…
        while !batcher.requests.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        // Queued behind it, then given up on.
        let gave_up = tokio::time::timeout(
            Duration::from_millis(5),
            batcher.embed(vec!["abandoned".into(); 3], 1),
        )
        .await;
        assert!(
            gave_up.is_err(),
            "the worker should still be busy with the long request"
        );
        let answered = batcher.embed(vec!["still wanted".into()], 1).await.unwrap();
        assert_eq!(answered.len(), 1);
        assert_eq!(busy.await.unwrap().unwrap().len(), 8);
        assert_eq!(
            batcher.texts_embedded(),
            9,
            "the abandoned request's 3 texts were embedded"
        );
    }
}
