//! An OpenAI-compatible embeddings endpoint: `POST {base}/embeddings` with
//! `{"model", "input": [...]}`, answered by `{"data": [{"index", "embedding"}]}`.
//! Each request has a timeout; a 429, a 5xx, a timeout or a dropped
//! connection is retried (at most `attempts` tries in all, with a growing
//! pause); any other failure, or an answer that is not one `DIMS`-float
//! vector per input, is an error at once.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::{DIMS, EmbedConfig, EmbedError, normalise};

const DEFAULT_MODEL: &str = "text-embedding-3-small";
/// Inputs per request.
const BATCH: usize = 64;

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    attempts: u32,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    pub fn new(config: &EmbedConfig) -> Result<Self, EmbedError> {
        let base = config
            .base_url
            .as_deref()
            .ok_or_else(|| EmbedError::Remote("CAIRN_EMBED_BASE_URL is not set".into()))?;
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| EmbedError::Remote(e.to_string()))?;
        Ok(Self {
            client,
            url: format!("{}/embeddings", base.trim_end_matches('/')),
            model: config.model.clone().unwrap_or_else(|| DEFAULT_MODEL.into()),
            api_key: config.api_key.clone(),
            attempts: config.attempts.max(1),
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk).await?);
        }
        Ok(out)
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut last = String::new();
        for attempt in 0..self.attempts {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(200 << (attempt - 1).min(5))).await;
            }
            let mut request = self
                .client
                .post(&self.url)
                .json(&json!({ "model": self.model, "input": texts }));
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key);
            }
            let response = match request.send().await {
                Ok(r) => r,
                Err(e) if e.is_timeout() || e.is_connect() || e.is_request() => {
                    last = format!("request failed: {e}");
                    continue;
                }
                Err(e) => return Err(EmbedError::Remote(e.to_string())),
            };
            let status = response.status();
            if status.as_u16() == 429 || status.is_server_error() {
                last = format!("HTTP {status}");
                continue;
            }
            if !status.is_success() {
                return Err(EmbedError::Remote(format!("HTTP {status}")));
            }
            let body = match response.bytes().await {
                Ok(b) => b,
                Err(e) if e.is_timeout() => {
                    last = format!("body timed out: {e}");
                    continue;
                }
                Err(e) => return Err(EmbedError::Remote(format!("body: {e}"))),
            };
            return parse(&body, texts.len());
        }
        Err(EmbedError::Remote(format!(
            "gave up after {} attempts: {last}",
            self.attempts
        )))
    }
}

/// The vectors of a response body, in input order, normalised.
fn parse(body: &[u8], expected: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    let response: Response =
        serde_json::from_slice(body).map_err(|e| EmbedError::Remote(format!("malformed answer: {e}")))?;
    if response.data.len() != expected {
        return Err(EmbedError::Remote(format!(
            "{} vectors for {expected} inputs",
            response.data.len()
        )));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in response.data.into_iter().enumerate() {
        let index = item.index.unwrap_or(position);
        if item.embedding.len() != DIMS {
            return Err(EmbedError::Remote(format!(
                "a vector of {} dimensions, not {DIMS}",
                item.embedding.len()
            )));
        }
        if item.embedding.iter().any(|x| !x.is_finite()) {
            return Err(EmbedError::Remote("a vector with a non-finite value".into()));
        }
        match slots.get_mut(index) {
            Some(slot @ None) => *slot = Some(item.embedding),
            _ => {
                return Err(EmbedError::Remote(format!(
                    "index {index} out of range or repeated"
                )));
            }
        }
    }
    Ok(slots
        .into_iter()
        .map(|v| {
            let mut v = v.expect("every slot filled: as many items as inputs, none repeated");
            normalise(&mut v);
            v
        })
        .collect())
}
