//! Which provider a generator uses, from `CAIRN_PROVIDER` and friends.
//!
//! | variable                    | default                                             |
//! |-----------------------------|-----------------------------------------------------|
//! | `CAIRN_PROVIDER`            | anthropic with a key, openai with a base URL, else heuristic |
//! | `CAIRN_ANTHROPIC_API_KEY`   | required for anthropic                              |
//! | `CAIRN_ANTHROPIC_BASE_URL`  | `https://api.anthropic.com`                         |
//! | `CAIRN_ANTHROPIC_MODEL`     | `claude-haiku-4-5`                                  |
//! | `CAIRN_OPENAI_BASE_URL`     | required for openai (`http://localhost:11434/v1`)   |
//! | `CAIRN_OPENAI_API_KEY`      | none (local servers need none)                      |
//! | `CAIRN_OPENAI_MODEL`        | required for openai                                 |
//! | `CAIRN_PROVIDER_TIMEOUT_MS` | `60000`                                             |
//! | `CAIRN_MAX_OUTPUT_TOKENS`   | `2048`                                              |

use std::{fmt, time::Duration};

use cairn_shared::config::{ConfigError, Env, is_set, millis, parsed, required, var};

/// Output budget when nothing is configured (and the heuristic's).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 2048;
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-haiku-4-5";
const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// The provider a generator asks, and how to reach it.
#[derive(Clone, Debug)]
pub enum ProviderConfig {
    /// The offline extractor; no model, no network.
    Heuristic,
    Anthropic(AnthropicConfig),
    OpenAi(OpenAiConfig),
}

/// The Anthropic Messages API. `Debug` never shows the key.
#[derive(Clone)]
pub struct AnthropicConfig {
    pub api_key: String,
    /// Without `/v1`: the client appends `/v1/messages`.
    pub base_url: String,
    pub model: String,
    /// One call, from connect to the last byte of the answer.
    pub timeout: Duration,
    pub max_output_tokens: u32,
}

/// Any OpenAI-compatible chat-completions server (Ollama, vLLM, LM Studio,
/// OpenRouter). `Debug` never shows the key.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Up to and including the version, such as `http://localhost:11434/v1`:
    /// the client appends `/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` only when set.
    pub api_key: Option<String>,
    pub model: String,
    /// One call, from connect to the last byte of the answer.
    pub timeout: Duration,
    pub max_output_tokens: u32,
}

impl ProviderConfig {
    /// Reads the provider's variables (see the module table). With no
    /// `CAIRN_PROVIDER`, a configured Anthropic key wins, then an
    /// OpenAI-compatible base URL, then the heuristic.
    pub fn from_env(env: &dyn Env) -> Result<Self, ConfigError> {
        let chosen = env.get("CAIRN_PROVIDER");
        let choice = match &chosen {
            Some(value) => value.trim().to_ascii_lowercase(),
            None if is_set(env, "CAIRN_ANTHROPIC_API_KEY") => "anthropic".into(),
            None if env.get("CAIRN_OPENAI_BASE_URL").is_some() => "openai".into(),
            None => "heuristic".into(),
        };
        match choice.as_str() {
            "heuristic" => Ok(ProviderConfig::Heuristic),
            "anthropic" => Ok(ProviderConfig::Anthropic(AnthropicConfig {
                api_key: required(
                    env,
                    "CAIRN_ANTHROPIC_API_KEY",
                    "an Anthropic API key (sk-ant-…), or CAIRN_PROVIDER=heuristic to run without a model",
                )?,
                base_url: base_url(
                    env,
                    "CAIRN_ANTHROPIC_BASE_URL",
                    Some(DEFAULT_ANTHROPIC_BASE_URL),
                    "",
                )?,
                model: env
                    .get("CAIRN_ANTHROPIC_MODEL")
                    .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.into()),
                timeout: timeout(env)?,
                max_output_tokens: max_output_tokens(env)?,
            })),
            "openai" => Ok(ProviderConfig::OpenAi(OpenAiConfig {
                base_url: base_url(
                    env,
                    "CAIRN_OPENAI_BASE_URL",
                    None,
                    "the server's OpenAI-compatible base URL, such as http://localhost:11434/v1 (Ollama)",
                )?,
                api_key: var(env, "CAIRN_OPENAI_API_KEY")?,
                model: required(
                    env,
                    "CAIRN_OPENAI_MODEL",
                    "the model name the server serves, such as llama3.1:8b (Ollama) or openai/gpt-4o-mini (OpenRouter)",
                )?,
                timeout: timeout(env)?,
                max_output_tokens: max_output_tokens(env)?,
            })),
            _ => Err(ConfigError::Invalid {
                name: "CAIRN_PROVIDER",
                value: chosen.unwrap_or_default(),
                reason: "expected heuristic, anthropic or openai".into(),
            }),
        }
    }

    /// The output budget to put in each request.
    pub fn max_output_tokens(&self) -> u32 {
        match self {
            ProviderConfig::Heuristic => DEFAULT_MAX_OUTPUT_TOKENS,
            ProviderConfig::Anthropic(config) => config.max_output_tokens,
            ProviderConfig::OpenAi(config) => config.max_output_tokens,
        }
    }
}

/// An `http(s)://` URL, without a trailing slash.
fn base_url(
    env: &dyn Env,
    name: &'static str,
    default: Option<&str>,
    hint: &'static str,
) -> Result<String, ConfigError> {
    let value = match default {
        Some(default) => env.get(name).unwrap_or_else(|| default.into()),
        None => required(env, name, hint)?,
    };
    let invalid = |reason: String| ConfigError::Invalid {
        name,
        value: value.clone(),
        reason,
    };
    let url = reqwest::Url::parse(value.trim()).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("must start with http:// or https://".into()));
    }
    Ok(value.trim().trim_end_matches('/').to_string())
}

fn timeout(env: &dyn Env) -> Result<Duration, ConfigError> {
    let name = "CAIRN_PROVIDER_TIMEOUT_MS";
    let timeout = millis(env, name, DEFAULT_TIMEOUT_MS)?;
    if timeout.is_zero() {
        return Err(ConfigError::Invalid {
            name,
            value: "0".into(),
            reason: "must be a positive number of milliseconds".into(),
        });
    }
    Ok(timeout)
}

fn max_output_tokens(env: &dyn Env) -> Result<u32, ConfigError> {
    let name = "CAIRN_MAX_OUTPUT_TOKENS";
    let tokens = parsed(env, name, DEFAULT_MAX_OUTPUT_TOKENS)?;
    if tokens == 0 {
        return Err(ConfigError::Invalid {
            name,
            value: "0".into(),
            reason: "must be positive".into(),
        });
    }
    Ok(tokens)
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("api_key", &"<redacted>")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_output_tokens", &self.max_output_tokens)
            .finish()
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_output_tokens", &self.max_output_tokens)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_configured_is_the_heuristic() {
        let config = ProviderConfig::from_env(&[("CAIRN_OTHER", "x")]).unwrap();
        assert!(matches!(config, ProviderConfig::Heuristic));
        assert_eq!(config.max_output_tokens(), DEFAULT_MAX_OUTPUT_TOKENS);
    }

    #[test]
    fn an_anthropic_key_selects_anthropic_with_defaults() {
        let config = ProviderConfig::from_env(&[
            ("CAIRN_ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("CAIRN_OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ])
        .unwrap();
        let ProviderConfig::Anthropic(anthropic) = &config else {
            panic!("{config:?}")
        };
        assert_eq!(anthropic.api_key, "sk-ant-secret");
        assert_eq!(anthropic.base_url, DEFAULT_ANTHROPIC_BASE_URL);
        assert_eq!(anthropic.model, DEFAULT_ANTHROPIC_MODEL);
        assert_eq!(anthropic.timeout, Duration::from_secs(60));
        assert_eq!(config.max_output_tokens(), 2048);
    }

    #[test]
    fn an_openai_base_url_selects_openai() {
        let config = ProviderConfig::from_env(&[
            ("CAIRN_OPENAI_BASE_URL", "http://localhost:11434/v1/"),
            ("CAIRN_OPENAI_MODEL", "llama3.1:8b"),
            ("CAIRN_PROVIDER_TIMEOUT_MS", "1500"),
            ("CAIRN_MAX_OUTPUT_TOKENS", "512"),
        ])
        .unwrap();
        let ProviderConfig::OpenAi(openai) = &config else {
            panic!("{config:?}")
        };
        assert_eq!(openai.base_url, "http://localhost:11434/v1");
        assert_eq!(openai.api_key, None);
        assert_eq!(openai.model, "llama3.1:8b");
        assert_eq!(openai.timeout, Duration::from_millis(1500));
        assert_eq!(config.max_output_tokens(), 512);
    }

    #[test]
    fn an_explicit_choice_wins() {
        let config = ProviderConfig::from_env(&[
            ("CAIRN_PROVIDER", "Heuristic"),
            ("CAIRN_ANTHROPIC_API_KEY", "sk-ant-secret"),
        ])
        .unwrap();
        assert!(matches!(config, ProviderConfig::Heuristic));
        let config = ProviderConfig::from_env(&[
            ("CAIRN_PROVIDER", "openai"),
            ("CAIRN_ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("CAIRN_OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ("CAIRN_OPENAI_API_KEY", "sk-or-secret"),
            ("CAIRN_OPENAI_MODEL", "openai/gpt-4o-mini"),
        ])
        .unwrap();
        let ProviderConfig::OpenAi(openai) = config else {
            panic!("{config:?}")
        };
        assert_eq!(openai.api_key.as_deref(), Some("sk-or-secret"));
    }

    #[test]
    fn missing_and_invalid_values_are_named() {
        let err = ProviderConfig::from_env(&[("CAIRN_PROVIDER", "gemini")]).unwrap_err();
        assert!(err.to_string().contains("CAIRN_PROVIDER is invalid"), "{err}");
        let err = ProviderConfig::from_env(&[("CAIRN_PROVIDER", "anthropic")]).unwrap_err();
        assert!(
            err.to_string().contains("CAIRN_ANTHROPIC_API_KEY is required"),
            "{err}"
        );
        let err =
            ProviderConfig::from_env(&[("CAIRN_OPENAI_BASE_URL", "http://localhost:8000/v1")]).unwrap_err();
        assert!(
            matches!(
                err,
                ConfigError::Missing {
                    name: "CAIRN_OPENAI_MODEL",
                    ..
                }
            ),
            "{err}"
        );
        let err = ProviderConfig::from_env(&[("CAIRN_PROVIDER", "openai"), ("CAIRN_OPENAI_MODEL", "m")])
            .unwrap_err();
        assert!(
            err.to_string().contains("CAIRN_OPENAI_BASE_URL is required"),
            "{err}"
        );
        let err = ProviderConfig::from_env(&[
            ("CAIRN_OPENAI_BASE_URL", "localhost:11434"),
            ("CAIRN_OPENAI_MODEL", "m"),
        ])
        .unwrap_err();
        assert!(
            err.to_string().contains("CAIRN_OPENAI_BASE_URL is invalid"),
            "{err}"
        );
        for (name, value) in [
            ("CAIRN_PROVIDER_TIMEOUT_MS", "soon"),
            ("CAIRN_PROVIDER_TIMEOUT_MS", "0"),
            ("CAIRN_MAX_OUTPUT_TOKENS", "0"),
            ("CAIRN_MAX_OUTPUT_TOKENS", "-1"),
        ] {
            let err =
                ProviderConfig::from_env(&[("CAIRN_ANTHROPIC_API_KEY", "k"), (name, value)]).unwrap_err();
            assert!(err.to_string().contains(&format!("{name} is invalid")), "{err}");
        }
    }

    #[test]
    fn debug_never_shows_a_key() {
        let config = ProviderConfig::from_env(&[("CAIRN_ANTHROPIC_API_KEY", "sk-ant-secret")]).unwrap();
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sk-ant-secret") && shown.contains("<redacted>"),
            "{shown}"
        );
        let config = ProviderConfig::from_env(&[
            ("CAIRN_OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ("CAIRN_OPENAI_API_KEY", "sk-or-secret"),
            ("CAIRN_OPENAI_MODEL", "m"),
        ])
        .unwrap();
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sk-or-secret") && shown.contains("<redacted>"),
            "{shown}"
        );
    }
}
