//! The Anthropic Messages API, with the stable system prompt marked for caching.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use super::{
    Completion, Provider, ProviderError, Request, Usage,
    config::AnthropicConfig,
    http::{JsonClient, millis, output_budget},
};

const API_VERSION: &str = "2023-06-01";

/// A client of `POST {base_url}/v1/messages`, reusing its connections.
pub struct Anthropic {
    config: AnthropicConfig,
    endpoint: String,
    headers: HeaderMap,
    http: JsonClient,
}

impl Anthropic {
    /// Fails only when the key cannot be a header value or TLS cannot start.
    pub fn new(config: AnthropicConfig) -> anyhow::Result<Self> {
        let mut key = HeaderValue::from_str(&config.api_key).map_err(|_| {
            anyhow::anyhow!("CAIRN_ANTHROPIC_API_KEY contains characters a header cannot carry")
        })?;
        key.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), key);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Ok(Self {
            endpoint: format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
            http: JsonClient::new("anthropic", config.timeout)?,
            headers,
            config,
        })
    }
}

#[async_trait::async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError> {
        let body = MessagesRequest {
            model: &self.config.model,
            max_tokens: output_budget(request.max_output_tokens, self.config.max_output_tokens),
            temperature: 0,
            system: [SystemBlock {
                kind: "text",
                text: request.system,
                cache_control: CacheControl { kind: "ephemeral" },
            }],
            messages: [Message {
                role: "user",
                content: request.user,
            }],
        };
        let reply = self
            .http
            .post::<MessagesResponse>(&self.endpoint, self.headers.clone(), &body)
            .await?;
        let answer = reply.body;
        if answer.stop_reason.as_deref() == Some("max_tokens") {
            tracing::debug!(model = %self.config.model, "anthropic answer stopped at max_tokens");
        }
        let text: String = answer
            .content
            .iter()
            .filter(|block| block.kind == "text")
            .filter_map(|block| block.text.as_deref())
            .collect();
        if text.trim().is_empty() {
            let stop = answer.stop_reason.as_deref().unwrap_or("none");
            return Err(self
                .http
                .parse_error(format!("answer has no text (stop_reason: {stop})")));
        }
        let usage = answer.usage.unwrap_or_default();
        Ok(Completion {
            text,
            usage: Usage {
                provider: self.name().into(),
                model: answer
                    .model
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| self.config.model.clone()),
                // Every input token, as OpenAI counts them: Anthropic reports cached ones apart.
                input_tokens: usage.input_tokens.unwrap_or(0)
                    + usage.cache_read_input_tokens.unwrap_or(0)
                    + usage.cache_creation_input_tokens.unwrap_or(0),
                output_tokens: usage.output_tokens.unwrap_or(0),
                cached_tokens: usage.cache_read_input_tokens.unwrap_or(0),
                cache_creation_tokens: usage.cache_creation_input_tokens.unwrap_or(0),
                latency_ms: millis(reply.latency),
            },
        })
    }
}

#[derive(Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    temperature: u8,
    system: [SystemBlock<'a>; 1],
    messages: [Message<'a>; 1],
}

/// The stable prefix; `cache_control` makes it a prompt-cache breakpoint.
#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Deserialize)]
struct MessagesResponse {
    #[serde(default)]
    model: Option<String>,
    content: Vec<ContentBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<MessagesUsage>,
}

/// Text blocks are kept; `thinking`, `tool_use` and others are skipped.
#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// `input_tokens` counts only the uncached part of the input.
#[derive(Default, Deserialize)]
struct MessagesUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}
