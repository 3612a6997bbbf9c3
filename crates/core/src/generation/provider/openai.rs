//! Any OpenAI-compatible chat-completions endpoint: Ollama, vLLM, LM Studio,
//! OpenRouter, OpenAI itself.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};

use super::{
    Completion, Provider, ProviderError, Request, Usage,
    config::OpenAiConfig,
    http::{JsonClient, millis, output_budget},
};

/// A client of `POST {base_url}/chat/completions`, reusing its connections.
pub struct OpenAi {
    config: OpenAiConfig,
    endpoint: String,
    headers: HeaderMap,
    http: JsonClient,
}

impl OpenAi {
    /// Fails only when the key cannot be a header value or TLS cannot start.
    pub fn new(config: OpenAiConfig) -> anyhow::Result<Self> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            let mut bearer = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                anyhow::anyhow!("CAIRN_OPENAI_API_KEY contains characters a header cannot carry")
            })?;
            bearer.set_sensitive(true);
            headers.insert(AUTHORIZATION, bearer);
        }
        Ok(Self {
            endpoint: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            http: JsonClient::new("openai", config.timeout)?,
            headers,
            config,
        })
    }
}

#[async_trait::async_trait]
impl Provider for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError> {
        let body = ChatRequest {
            model: &self.config.model,
            max_tokens: output_budget(request.max_output_tokens, self.config.max_output_tokens),
            temperature: 0,
            messages: [
                Message {
                    role: "system",
                    content: request.system,
                },
                Message {
                    role: "user",
                    content: request.user,
                },
            ],
        };
        let reply = self
            .http
            .post::<ChatResponse>(&self.endpoint, self.headers.clone(), &body)
            .await?;
        let answer = reply.body;
        let Some(choice) = answer.choices.into_iter().next() else {
            return Err(self.http.parse_error("answer has no choices"));
        };
        if choice.finish_reason.as_deref() == Some("length") {
            tracing::debug!(model = %self.config.model, "openai answer stopped at max_tokens");
        }
        let text = choice.message.and_then(|m| m.content).unwrap_or_default();
        if text.trim().is_empty() {
            let finish = choice.finish_reason.as_deref().unwrap_or("none");
            return Err(self
                .http
                .parse_error(format!("answer has no text (finish_reason: {finish})")));
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
                input_tokens: usage.prompt_tokens.unwrap_or(0),
                output_tokens: usage.completion_tokens.unwrap_or(0),
                cached_tokens: usage
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
                cache_creation_tokens: 0,
                latency_ms: millis(reply.latency),
            },
        })
    }
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    temperature: u8,
    messages: [Message<'a>; 2],
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<AnswerMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnswerMessage {
    #[serde(default)]
    content: Option<String>,
}

/// `prompt_tokens` includes the cached part; `prompt_tokens_details` is
/// absent on many servers.
#[derive(Default, Deserialize)]
struct ChatUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}
