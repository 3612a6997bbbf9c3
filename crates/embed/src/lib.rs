//! Text embeddings for search and context: 384-dimensional, L2-normalised
//! vectors from a local sentence-transformers model (`local`) or an
//! OpenAI-compatible endpoint (`openai`), or none at all (`none`: search
//! stays full-text only).
//!
//! `Embedder::from_config` never fails: a missing or unreadable model turns
//! embeddings off with one warning, so the services start and run without.

mod batcher;
mod config;
mod encoder;
mod local;
mod openai;

use std::sync::Arc;

pub use config::{EmbedConfig, Provider, model_dir};
pub use encoder::Precision;
pub use local::LocalModel;
pub use openai::OpenAiEmbedder;

/// Dimensions of every vector (all-MiniLM-L6-v2's; an OpenAI-compatible
/// model must answer with the same number).
pub const DIMS: usize = 384;

#[derive(Clone, Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model: {0}")]
    Model(String),
    #[error("embedding endpoint: {0}")]
    Remote(String),
    #[error("the embedding task stopped: {0}")]
    Task(String),
}

/// A loaded embedder, cheap to clone and share between tasks.
#[derive(Clone)]
pub struct Embedder {
    inner: Arc<Inner>,
}

enum Inner {
    Local(batcher::Batcher),
    OpenAi(OpenAiEmbedder),
}

/// The local model behind its workers, one a core.
fn local_inner(model: LocalModel) -> Result<Inner, EmbedError> {
    tracing::info!(
        precision = model.precision().as_str(),
        "local embedding model loaded"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(Inner::Local(batcher::Batcher::start(Arc::new(model), cores)?))
}

impl Embedder {
    /// The embedder the configuration asks for, or `None` (logged once as a
    /// warning) when it is turned off or cannot be loaded.
    pub fn from_config(config: &EmbedConfig) -> Option<Embedder> {
        let inner = match config.provider {
            Provider::None => {
                tracing::info!("embeddings are off (CAIRN_EMBED_PROVIDER=none): search is full-text only");
                return None;
            }
            Provider::Local => {
                match LocalModel::load_with(&config.model_dir, config.precision).and_then(local_inner) {
                    Ok(inner) => inner,
                    Err(e) => {
                        tracing::warn!(
                            model_dir = %config.model_dir.display(),
                            error = %e,
                            "embedding model not loaded: search is full-text only (scripts/fetch-model.sh fetches it)"
                        );
                        return None;
                    }
                }
            }
            Provider::OpenAi => match OpenAiEmbedder::new(config) {
                Ok(remote) => Inner::OpenAi(remote),
                Err(e) => {
                    tracing::warn!(error = %e, "embedding endpoint not configured: search is full-text only");
                    return None;
                }
            },
        };
        let embedder = Embedder {
            inner: Arc::new(inner),
        };
        tracing::info!(model = embedder.model(), "embeddings on");
        Some(embedder)
    }

    /// The local model in `dir`, for tests and tools.
    pub fn local(dir: &std::path::Path) -> Result<Embedder, EmbedError> {
        Self::local_with(dir, Precision::Int8)
    }

    /// The local model in `dir` in `precision` (where the CPU runs it).
    pub fn local_with(dir: &std::path::Path, precision: Precision) -> Result<Embedder, EmbedError> {
        Ok(Embedder {
            inner: Arc::new(local_inner(LocalModel::load_with(dir, precision)?)?),
        })
    }

    /// The name stored beside each vector, so vectors of another model are told apart.
    pub fn model(&self) -> &str {
        match &*self.inner {
            Inner::Local(_) => local::MODEL_NAME,
            Inner::OpenAi(r) => r.model(),
        }
    }

    /// How the embedder reads a stored text, kept beside each vector so that
    /// a vector of an older reading is re-read ([`local::READING`]); a remote
    /// endpoint reads a text as it always has.
    pub fn reading(&self) -> i16 {
        match &*self.inner {
            Inner::Local(_) => local::READING,
            Inner::OpenAi(_) => 1,
        }
    }

    /// Whether [`Embedder::embed`] of each text reads more than its first
    /// window, i.e. differs from a first-window-only reading (reading 1): the
    /// local model's tokenizer on a blocking thread, no encoder; false for a
    /// remote endpoint.
    pub async fn reads_past_first_window(&self, texts: Vec<String>) -> Result<Vec<bool>, EmbedError> {
        let model = match &*self.inner {
            Inner::Local(batcher) => batcher.model().clone(),
            Inner::OpenAi(_) => return Ok(vec![false; texts.len()]),
        };
        tokio::task::spawn_blocking(move || model.windows(&texts))
            .await
            .map_err(|e| EmbedError::Task(format!("counting windows: {e}")))?
            .map(|w| w.into_iter().map(|n| n > 1).collect())
    }

    /// The local model's precision on this CPU; `None` for a remote endpoint.
    pub fn precision(&self) -> Option<Precision> {
        match &*self.inner {
            Inner::Local(batcher) => Some(batcher.precision()),
            Inner::OpenAi(_) => None,
        }
    }

    /// Texts the local model has embedded since it was loaded (requests
    /// whose callers gave up before a worker reached them are not
    /// embedded); `None` for a remote endpoint.
    pub fn texts_embedded(&self) -> Option<u64> {
        match &*self.inner {
            Inner::Local(batcher) => Some(batcher.texts_embedded()),
            Inner::OpenAi(_) => None,
        }
    }

    /// One vector per stored text (a memory), in order, each of `DIMS`
    /// floats with norm 1; the local model reads a long text to its end, in
    /// windows (`local`), on its own threads (`batcher`).
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_reading(texts, local::MAX_WINDOWS).await
    }

    /// One stored text's vector ([`Embedder::embed`]).
    pub async fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed(vec![text.to_string()]).await?;
        v.pop()
            .ok_or_else(|| EmbedError::Model("no vector came back".into()))
    }

    /// A query's vector: the local model reads its first window only, so a
    /// long prompt costs one window's time on the hot path.
    pub async fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_reading(vec![text.to_string()], 1).await?;
        v.pop()
            .ok_or_else(|| EmbedError::Model("no vector came back".into()))
    }

    async fn embed_reading(&self, texts: Vec<String>, windows: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(vec![]);
        }
        match &*self.inner {
            Inner::Local(batcher) => batcher.embed(texts, windows).await,
            Inner::OpenAi(remote) => remote.embed(&texts).await,
        }
    }
}

/// The dot product: the cosine similarity of two normalised vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales `v` to norm 1 (a zero vector stays zero).
pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
