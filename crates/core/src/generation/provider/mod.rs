//! LLM providers behind one trait: Anthropic Messages, any OpenAI-compatible
//! chat-completions endpoint, and the offline `heuristic` extractor. Each
//! answers with text in the XML of COMPAT.md §3, or a classified error that
//! decides the job's retry (see `retry`).

pub mod anthropic;
mod build;
pub mod config;
pub mod heuristic;
mod http;
pub mod openai;

use std::time::Duration;

use serde::Serialize;

use crate::generation::material::Material;

pub use build::build_provider;
pub use config::ProviderConfig;

/// What a provider is asked.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The stable prefix (instructions and format); cached by providers that can.
    pub system: &'a str,
    /// The job's own part: its events, rendered and budgeted.
    pub user: &'a str,
    /// The raw material, for providers that work without a model (heuristic).
    pub material: &'a Material,
    /// An observation job that ends its turn: the answer holds the turn's
    /// summary too (the heuristic writes one; a model is asked in `user`).
    pub summarise_turn: bool,
    pub max_output_tokens: u32,
}

/// Token counts and timing of one call, stored on the job. The default
/// (no provider) stands for a job that made no call: nothing is stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub provider: String,
    pub model: String,
    /// Every input token, cached or not.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cached_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_creation_tokens: u64,
    pub latency_ms: u64,
}

/// A provider's answer.
#[derive(Clone, Debug)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
}

/// Why a call failed, which decides what happens to the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Network errors, timeouts, 5xx, 529 overloaded: retry with backoff.
    Transient,
    /// 429: retry at Retry-After, or with backoff.
    RateLimit,
    /// Out of credits or over a spending limit: retry much later.
    Quota,
    /// Bad or missing key, no permission: fail; an operator retries after fixing it.
    Auth,
    /// The request itself is wrong (400, 404, 413, …): fail.
    Unrecoverable,
    /// The answer could not be read as COMPAT.md §3 XML: retry, then fail.
    ParseError,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Transient => "transient",
            ErrorClass::RateLimit => "rate_limit",
            ErrorClass::Quota => "quota",
            ErrorClass::Auth => "auth",
            ErrorClass::Unrecoverable => "unrecoverable",
            ErrorClass::ParseError => "parse_error",
        }
    }
}

#[derive(Clone, Debug, thiserror::Error)]
#[error("{}: {message}", class.as_str())]
pub struct ProviderError {
    pub class: ErrorClass,
    pub message: String,
    /// From a Retry-After header (seconds or HTTP date), when the provider sent one.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            retry_after: None,
        }
    }
}

#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// `anthropic`, `openai`, `heuristic`: stored on every row it makes.
    fn name(&self) -> &'static str;
    fn model(&self) -> &str;
    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError>;
}
