//! A BERT encoder for sentence embeddings, written for the shapes Cairn
//! runs: a handful of short texts at a time on a few cores. The token rows
//! of every text in a call are stacked into one matrix, so each weight is
//! read once per call whatever the number of texts, and no text is padded;
//! attention runs text by text. Mean pooling and L2 normalisation follow,
//! as sentence-transformers does. The linear maps run in f32 or, where the
//! CPU has AVX-512 VNNI or AVX2, in 8-bit integers (`int8`; on AMX tiles
//! where the CPU has them and Linux grants them, `amx`).

#[cfg(target_arch = "x86_64")]
mod amx;
mod int8;
mod kernels;
mod weights;

use std::ops::Range;
use std::path::Path;

pub use weights::Config;
use weights::{LayerNorm, Weights};

use crate::EmbedError;

pub struct Encoder {
    config: Config,
    weights: Weights,
    precision: Precision,
}

/// The arithmetic of the encoder's linear maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Weights and activations in f32: the reference model's numbers
    /// (within 1e-4).
    F32,
    /// Weights and activations in 8-bit integers, on AVX-512 VNNI or AVX2:
    /// a half to a third of the time of f32, vectors within cosine 0.998 of
    /// it (the same vectors on both paths). On a CPU with neither this is f32.
    Int8,
}

impl Precision {
    /// `Int8` where the CPU runs it, else `F32`.
    fn effective(self) -> Precision {
        match self {
            Precision::Int8 if int8::available() => Precision::Int8,
            _ => Precision::F32,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }
}

impl Encoder {
    /// Loads `config.json`'s model from `weights` (a safetensors file), its
    /// linear maps in `precision` where the CPU runs it.
    pub fn load(config: Config, weights: &Path, precision: Precision) -> Result<Self, EmbedError> {
        if config.hidden_act != "gelu" {
            return Err(EmbedError::Model(format!(
                "hidden_act {:?} is not supported (only BERT's exact \"gelu\")",
                config.hidden_act
            )));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(EmbedError::Model(format!(
                "{} attention heads do not divide hidden_size {}",
                config.num_attention_heads, config.hidden_size
            )));
        }
        let precision = precision.effective();
        let weights = Weights::load(weights, &config, precision)?;
        Ok(Self {
            config,
            weights,
            precision,
        })
    }

    /// The precision the linear maps run in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// One mean-pooled, L2-normalised vector per token sequence, in order.
    pub fn embed(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let h = self.config.hidden_size;
        let spans = spans(sequences);
        let total = spans.last().map_or(0, |s| s.end);
        let mut x = self.embeddings(sequences, total)?;
        let mut qkv = vec![0.0; total * 3 * h];
        let mut context = vec![0.0; total * h];
        let mut scratch = vec![0.0; total * h];
        let mut inner = vec![0.0; total * self.config.intermediate_size];
        let eps = self.config.layer_norm_eps as f32;
        for layer in &self.weights.layers {
            layer.qkv.apply(&x, &mut qkv);
            self.attention(&qkv, &spans, &mut context);
            layer.attention_out.apply(&context, &mut scratch);
            residual_norm(&mut x, &mut scratch, &layer.attention_norm, eps);
            layer.intermediate.apply(&x, &mut inner);
            kernels::gelu(&mut inner);
            layer.output.apply(&inner, &mut scratch);
            residual_norm(&mut x, &mut scratch, &layer.output_norm, eps);
        }
        Ok(spans
            .iter()
            .map(|span| mean_pool(&x[span.start * h..span.end * h], h))
            .collect())
    }

    /// Word + position + token-type embeddings, layer-normalised: one row a token.
    fn embeddings(&self, sequences: &[&[u32]], total: usize) -> Result<Vec<f32>, EmbedError> {
        let (h, w) = (self.config.hidden_size, &self.weights);
        let mut x = Vec::with_capacity(total * h);
        for sequence in sequences {
            if sequence.len() > self.config.max_position_embeddings {
                return Err(EmbedError::Model(format!(
                    "{} tokens, more than the model's {} positions",
                    sequence.len(),
                    self.config.max_position_embeddings
                )));
            }
            for (position, &id) in sequence.iter().enumerate() {
                let id = id as usize;
                let word = w
                    .word
                    .get(id * h..(id + 1) * h)
                    .ok_or_else(|| EmbedError::Model(format!("token id {id} is outside the vocabulary")))?;
                let position = &w.position[position * h..(position + 1) * h];
                x.extend(
                    word.iter()
                        .zip(position)
                        .zip(&w.token_type)
                        .map(|((a, b), c)| a + b + c),
                );
            }
        }
        let norm = &w.embedding_norm;
        kernels::layer_norm(&mut x, &norm.gamma, &norm.beta, self.config.layer_norm_eps as f32);
        Ok(x)
    }

    /// Scaled dot-product attention of every head, each text attending to
    /// itself only. `qkv` holds a token's query, key and value side by side.
    fn attention(&self, qkv: &[f32], spans: &[Range<usize>], context: &mut [f32]) {
        let h = self.config.hidden_size;
        let head_dims = h / self.config.num_attention_heads;
        let scale = 1.0 / (head_dims as f32).sqrt();
        let row = |token: usize, part: usize, head: usize| {
            let start = token * 3 * h + part * h + head * head_dims;
            &qkv[start..start + head_dims]
        };
        let mut scores = Vec::new();
        for span in spans {
            scores.resize(span.len(), 0.0);
            for head in 0..self.config.num_attention_heads {
                for i in span.clone() {
                    let query = row(i, 0, head);
                    for (score, j) in scores.iter_mut().zip(span.clone()) {
                        *score = kernels::dot(query, row(j, 1, head)) * scale;
                    }
                    kernels::softmax(&mut scores);
                    let out = &mut context[i * h + head * head_dims..][..head_dims];
                    out.fill(0.0);
                    for (p, j) in scores.iter().zip(span.clone()) {
                        out.iter_mut().zip(row(j, 2, head)).for_each(|(o, v)| *o += p * v);
                    }
                }
            }
        }
    }
}

/// The rows each sequence occupies in the stacked matrix.
fn spans(sequences: &[&[u32]]) -> Vec<Range<usize>> {
    let mut start = 0;
    sequences
        .iter()
        .map(|s| {
            let span = start..start + s.len();
            start = span.end;
            span
        })
        .collect()
}

/// `x = LayerNorm(x + sublayer)`; `sublayer` is left as scratch.
fn residual_norm(x: &mut Vec<f32>, sublayer: &mut Vec<f32>, norm: &LayerNorm, eps: f32) {
    sublayer.iter_mut().zip(x.iter()).for_each(|(s, v)| *s += v);
    kernels::layer_norm(sublayer, &norm.gamma, &norm.beta, eps);
    std::mem::swap(x, sublayer);
}

/// The mean of `rows` (each `width` wide), scaled to norm 1: their sum,
/// normalised (dividing by the count first would change nothing).
fn mean_pool(rows: &[f32], width: usize) -> Vec<f32> {
    let mut sum = vec![0.0; width];
    for row in rows.chunks_exact(width) {
        sum.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    crate::normalise(&mut sum);
    sum
}
