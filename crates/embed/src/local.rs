//! all-MiniLM-L6-v2 on the CPU: WordPiece tokens, the 6-layer BERT encoder
//! (`crate::encoder`), mean pooling, then L2 normalisation — what
//! sentence-transformers does for this model.
//!
//! The model reads at most its `max_seq_length` (256) tokens at once, and
//! sentence-transformers drops the rest. A memory is often longer (an
//! observation with its error excerpt, a summary: a third of the recall
//! benchmark's were), and a question may be about its tail. So a longer text
//! is read in windows of that length (the tokenizer's overflow, each with
//! its own `[CLS]` and `[SEP]`), up to `MAX_WINDOWS`, and its vector is the
//! windows' vectors averaged by their tokens and normalised again: close to
//! mean pooling over the whole text. A query is read in one window
//! (`Embedder::embed_query`): a long prompt costs no more than before, and a
//! text within one window gets exactly the model's vector either way.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationParams};

use crate::encoder::{Config, Encoder, Precision};
use crate::{DIMS, EmbedError};

/// The name stored beside each vector this model makes.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Texts run through the encoder at once; longer inputs are split. The
/// encoder reads each weight once per call, so a call of several short
/// texts costs little more than one; a call's buffers grow with its tokens
/// (8 texts of 256 tokens: ~20 MB).
const BATCH: usize = 8;
/// The model's `max_seq_length` when `sentence_bert_config.json` does not say.
const DEFAULT_MAX_TOKENS: usize = 256;
/// The most windows of one stored text that are read: 1,024 tokens, about
/// 4 KB of English, more than any memory of the recall benchmark (the
/// longest summary was 596). The rest is left to the lexical arm: a full
/// window costs a write about 150 ms of CPU on an AVX2 machine
/// (bench/README.md, "Long memories read to their end").
pub const MAX_WINDOWS: usize = 4;
/// How this crate reads a stored text, kept beside each vector: 1 read the
/// first window only (before 2026-12-03), 2 reads up to [`MAX_WINDOWS`].
/// Raised whenever the same model's vector of a text changes, so that the
/// backfill re-reads what an older reading embedded.
pub const READING: i16 = 2;
/// The files a model directory must hold.
pub const FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

pub struct LocalModel {
    encoder: Encoder,
    tokenizer: Tokenizer,
}

impl LocalModel {
    /// Loads the model in `dir`, in 8-bit integers where the CPU runs them.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, Precision::Int8)
    }

    /// Loads the model in `dir`, its linear maps in `precision` where the
    /// CPU runs it.
    pub fn load_with(dir: &Path, precision: Precision) -> Result<Self, EmbedError> {
        for file in FILES {
            if !dir.join(file).is_file() {
                return Err(EmbedError::Model(format!(
                    "{} is missing",
                    dir.join(file).display()
                )));
            }
        }
        let config: Config = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .map_err(|e| EmbedError::Model(format!("config.json: {e}")))?;
        if config.hidden_size != DIMS {
            return Err(EmbedError::Model(format!(
                "the model makes {}-dimensional vectors, not {DIMS}",
                config.hidden_size
            )));
        }
        let max_tokens = std::fs::read_to_string(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .min(config.max_position_embeddings);
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| EmbedError::Model(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Model(format!("truncation: {e}")))?;
        let encoder = Encoder::load(config, &dir.join("model.safetensors"), precision)?;
        Ok(Self { encoder, tokenizer })
    }

    /// The precision the model runs in on this CPU.
    pub fn precision(&self) -> Precision {
        self.encoder.precision()
    }

    /// One normalised vector per text, in order; a text longer than one
    /// window is read in up to [`MAX_WINDOWS`] (module doc).
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_windows(texts, &vec![MAX_WINDOWS; texts.len()])
    }

    /// How many windows [`LocalModel::embed`] reads of each text (at most
    /// [`MAX_WINDOWS`]): the tokenizer alone, no encoder.
    pub fn windows(&self, texts: &[String]) -> Result<Vec<usize>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
        Ok(encodings
            .iter()
            .map(|e| (1 + e.get_overflowing().len()).min(MAX_WINDOWS))
            .collect())
    }

    /// [`LocalModel::embed`], text `i` read in at most `windows[i]` windows
    /// (1: truncated to the model's length, as sentence-transformers does).
    pub fn embed_windows(&self, texts: &[String], windows: &[usize]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for (chunk, limits) in texts.chunks(BATCH).zip(windows.chunks(BATCH)) {
            let encodings = self
                .tokenizer
                .encode_batch(chunk.to_vec(), true)
                .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
            // Every window of the chunk's texts, and whose it is.
            let mut spans: Vec<&[u32]> = Vec::with_capacity(encodings.len());
            let mut owners: Vec<usize> = Vec::with_capacity(encodings.len());
            for (text, (encoding, &limit)) in encodings.iter().zip(limits).enumerate() {
                let overflow = encoding.get_overflowing().iter().map(|e| e.get_ids());
                for ids in std::iter::once(encoding.get_ids())
                    .chain(overflow)
                    .take(limit.max(1))
                {
                    spans.push(ids);
                    owners.push(text);
                }
            }
            let mut vectors = Vec::with_capacity(spans.len());
            for batch in spans.chunks(BATCH) {
                vectors.extend(self.encoder.embed(batch)?);
            }
            out.extend(pool_windows(encodings.len(), &owners, &spans, vectors));
        }
        Ok(out)
    }
}

/// Each text's vector from its windows' (`owners[i]` is window i's text):
/// the window's own vector where it is alone, else the windows' vectors
/// weighted by their tokens, normalised.
fn pool_windows(texts: usize, owners: &[usize], windows: &[&[u32]], vectors: Vec<Vec<f32>>) -> Vec<Vec<f32>> {
    let mut each: Vec<Vec<(f32, Vec<f32>)>> = vec![Vec::new(); texts];
    for ((&text, ids), vector) in owners.iter().zip(windows).zip(vectors) {
        each[text].push((ids.len() as f32, vector));
    }
    each.into_iter()
        .map(|mut parts| {
            if parts.len() == 1 {
                return parts.pop().map(|(_, v)| v).unwrap_or_default();
            }
            let mut sum = vec![0.0; DIMS];
            for (weight, vector) in &parts {
                sum.iter_mut().zip(vector).for_each(|(s, v)| *s += v * weight);
            }
            crate::normalise(&mut sum);
            sum
        })
        .collect()
}
