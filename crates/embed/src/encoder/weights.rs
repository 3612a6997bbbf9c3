//! The BERT weights, read from a `model.safetensors` file into owned f32
//! arrays, laid out for the encoder (query, key and value maps stacked into
//! one matrix); the linear maps' matrices in 8-bit integers when the
//! encoder runs in `Precision::Int8`.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use super::int8::{self, Int8Matrix};
use super::{Precision, kernels};
use crate::EmbedError;

/// The shape of the model, from its `config.json`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_eps() -> f64 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

/// A weight matrix (`rows` × `cols`, row-major) and its bias (`rows` long).
pub struct Linear {
    weight: Matrix,
    bias: Vec<f32>,
}

enum Matrix {
    F32 { w: Vec<f32>, cols: usize },
    Int8(Int8Matrix),
}

impl Linear {
    /// `y = x·Wᵀ + bias` over the token rows of `x`.
    pub fn apply(&self, x: &[f32], y: &mut [f32]) {
        match &self.weight {
            Matrix::F32 { w, cols } => kernels::linear(x, *cols, w, &self.bias, y),
            Matrix::Int8(m) => int8::linear(x, m, &self.bias, y),
        }
    }

    fn new(w: Vec<f32>, bias: Vec<f32>, cols: usize, precision: Precision) -> Self {
        let weight = match precision {
            Precision::Int8 if bias.len().is_multiple_of(4) => Matrix::Int8(Int8Matrix::quantise(&w, cols)),
            _ => Matrix::F32 { w, cols },
        };
        Linear { weight, bias }
    }
}

pub struct LayerNorm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

pub struct Layer {
    /// Query, key and value maps, stacked: `3·hidden` rows.
    pub qkv: Linear,
    pub attention_out: Linear,
    pub attention_norm: LayerNorm,
    pub intermediate: Linear,
    pub output: Linear,
    pub output_norm: LayerNorm,
}

pub struct Weights {
    pub word: Vec<f32>,
    pub position: Vec<f32>,
    /// Token type 0's embedding (single-segment inputs only).
    pub token_type: Vec<f32>,
    pub embedding_norm: LayerNorm,
    pub layers: Vec<Layer>,
}

impl Weights {
    /// Reads every tensor the encoder needs from `path`, checking each shape
    /// against `config`.
    pub fn load(path: &Path, config: &Config, precision: Precision) -> Result<Self, EmbedError> {
        let file =
            std::fs::File::open(path).map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        // Safety: the weights file is mapped read-only and copied out before
        // this function returns; it is not expected to change meanwhile.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        let tensors = SafeTensors::deserialize(&map)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        let reader = Reader { tensors: &tensors };
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let norm = |prefix: &str| -> Result<LayerNorm, EmbedError> {
            Ok(LayerNorm {
                gamma: reader.get(&format!("{prefix}.LayerNorm.weight"), &[h])?,
                beta: reader.get(&format!("{prefix}.LayerNorm.bias"), &[h])?,
            })
        };
        let parts = |prefix: &str, rows: usize, cols: usize| -> Result<(Vec<f32>, Vec<f32>), EmbedError> {
            Ok((
                reader.get(&format!("{prefix}.weight"), &[rows, cols])?,
                reader.get(&format!("{prefix}.bias"), &[rows])?,
            ))
        };
        let linear = |prefix: &str, rows: usize, cols: usize| -> Result<Linear, EmbedError> {
            let (w, bias) = parts(prefix, rows, cols)?;
            Ok(Linear::new(w, bias, cols, precision))
        };
        let layers = (0..config.num_hidden_layers)
            .map(|l| {
                let p = format!("encoder.layer.{l}");
                let (mut w, mut bias) = (Vec::with_capacity(3 * h * h), Vec::with_capacity(3 * h));
                for m in ["query", "key", "value"] {
                    let (pw, pb) = parts(&format!("{p}.attention.self.{m}"), h, h)?;
                    w.extend(pw);
                    bias.extend(pb);
                }
                Ok(Layer {
                    qkv: Linear::new(w, bias, h, precision),
                    attention_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                    attention_norm: norm(&format!("{p}.attention.output"))?,
                    intermediate: linear(&format!("{p}.intermediate.dense"), i, h)?,
                    output: linear(&format!("{p}.output.dense"), h, i)?,
                    output_norm: norm(&format!("{p}.output"))?,
                })
            })
            .collect::<Result<Vec<_>, EmbedError>>()?;
        let token_types = reader.tensor("embeddings.token_type_embeddings.weight")?;
        Ok(Weights {
            word: reader.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            position: reader.get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            token_type: token_types
                .get(..h)
                .map(<[f32]>::to_vec)
                .ok_or_else(|| EmbedError::Model("embeddings.token_type_embeddings.weight: empty".into()))?,
            embedding_norm: norm("embeddings")?,
            layers,
        })
    }
}

struct Reader<'a> {
    tensors: &'a SafeTensors<'a>,
}

impl Reader<'_> {
    /// The tensor `name` as f32, whatever its shape.
    fn tensor(&self, name: &str) -> Result<Vec<f32>, EmbedError> {
        let view = self
            .tensors
            .tensor(name)
            .map_err(|e| EmbedError::Model(format!("{name}: {e}")))?;
        if view.dtype() != Dtype::F32 {
            return Err(EmbedError::Model(format!(
                "{name}: {:?} weights, expected F32",
                view.dtype()
            )));
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The tensor `name`, which must have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let view = self
            .tensors
            .tensor(name)
            .map_err(|e| EmbedError::Model(format!("{name}: {e}")))?;
        if view.shape() != shape {
            return Err(EmbedError::Model(format!(
                "{name}: shape {:?}, expected {shape:?}",
                view.shape()
            )));
        }
        self.tensor(name)
    }
}
