//! all-MiniLM-L6-v2 on the CPU with candle: WordPiece tokens (truncated to
//! the model's `max_seq_length`, 256), the 6-layer BERT encoder, mean
//! pooling over the attention mask, then L2 normalisation — what
//! sentence-transformers does for this model.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::{DIMS, EmbedError};

/// The name stored beside each vector this model makes.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Texts run through the encoder at once; longer inputs are split. Larger
/// batches gave no more texts per second on 2 cores, and the attention of a
/// batch of 32 long texts peaks near 900 MB (bench/README.md).
const BATCH: usize = 8;
/// The model's `max_seq_length` when `sentence_bert_config.json` does not say.
const DEFAULT_MAX_TOKENS: usize = 256;
/// The files a model directory must hold.
pub const FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

pub struct LocalModel {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn model_err(what: &str) -> impl Fn(String) -> EmbedError + '_ {
    move |e| EmbedError::Model(format!("{what}: {e}"))
}

impl LocalModel {
    /// Loads the model in `dir` (memory-maps the weights).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        for file in FILES {
            if !dir.join(file).is_file() {
                return Err(EmbedError::Model(format!(
                    "{} is missing",
                    dir.join(file).display()
                )));
            }
        }
        let device = Device::Cpu;
        let config: Config = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .map_err(model_err("config.json"))?;
        let max_tokens = std::fs::read_to_string(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_MAX_TOKENS);
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| EmbedError::Model(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Model(format!("truncation: {e}")))?;
        // Safety: the weights file is memory-mapped read-only; it is not
        // expected to change while the process runs.
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &device)
                .map_err(|e| EmbedError::Model(format!("model.safetensors: {e}")))?
        };
        let model = BertModel::load(vb, &config).map_err(|e| EmbedError::Model(format!("weights: {e}")))?;
        if config.hidden_size != DIMS {
            return Err(EmbedError::Model(format!(
                "the model makes {}-dimensional vectors, not {DIMS}",
                config.hidden_size
            )));
        }
        Ok(Self {
            model,
            tokenizer,
            device,
        })
    }

    pub fn name(&self) -> &str {
        MODEL_NAME
    }

    /// One normalised vector per text, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(
                self.embed_batch(chunk)
                    .map_err(|e| EmbedError::Model(e.to_string()))?,
            );
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| anyhow::anyhow!("tokenizer: {e}"))?;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> candle_core::Result<Tensor> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &self.device))
                .collect::<candle_core::Result<Vec<_>>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = rows(&|e| e.get_ids())?;
        let mask = rows(&|e| e.get_attention_mask())?;
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (batch, tokens, DIMS)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, tokens, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (batch, DIMS)
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (batch, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}
