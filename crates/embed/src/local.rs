//! all-MiniLM-L6-v2 on the CPU: WordPiece tokens (truncated to the model's
//! `max_seq_length`, 256), the 6-layer BERT encoder (`crate::encoder`),
//! mean pooling, then L2 normalisation — what sentence-transformers does
//! for this model.

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

    /// One normalised vector per text, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let encodings = self
                .tokenizer
                .encode_batch(chunk.to_vec(), true)
                .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
            let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
            out.extend(self.encoder.embed(&ids)?);
        }
        Ok(out)
    }
}
