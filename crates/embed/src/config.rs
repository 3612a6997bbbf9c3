//! Embedding settings from the environment (`CAIRN_EMBED_*`).

use std::{path::PathBuf, time::Duration};

use crate::Precision;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    Local,
    OpenAi,
    None,
}

#[derive(Clone, Debug)]
pub struct EmbedConfig {
    pub provider: Provider,
    /// The local model's files (`config.json`, `model.safetensors`, `tokenizer.json`).
    pub model_dir: PathBuf,
    /// The local model's arithmetic: `int8` where the CPU has AVX-512 VNNI
    /// or AVX2 (else f32), or `f32` always.
    pub precision: Precision,
    /// OpenAI-compatible API root, e.g. `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// The remote model's name.
    pub model: Option<String>,
    pub timeout: Duration,
    /// Attempts per request, the first included.
    pub attempts: u32,
}

/// Where the local model is looked for: `CAIRN_EMBED_MODEL_DIR`, else
/// `$HOME/.cache/cairn/models/all-minilm-l6-v2` (where
/// `scripts/fetch-model.sh` puts it).
pub fn model_dir() -> PathBuf {
    EmbedConfig::from_env().model_dir
}

impl EmbedConfig {
    /// | variable | default |
    /// |---|---|
    /// | `CAIRN_EMBED_PROVIDER` | `local` (`openai`, `none`) |
    /// | `CAIRN_EMBED_MODEL_DIR` | `$HOME/.cache/cairn/models/all-minilm-l6-v2` |
    /// | `CAIRN_EMBED_PRECISION` | `int8` (`f32`) |
    /// | `CAIRN_EMBED_BASE_URL` | none (required for `openai`) |
    /// | `CAIRN_EMBED_API_KEY` / `CAIRN_EMBED_API_KEY_FILE` | none |
    /// | `CAIRN_EMBED_MODEL` | `text-embedding-3-small` |
    /// | `CAIRN_EMBED_TIMEOUT_MS` | `10000` |
    ///
    /// An unknown provider is read as `none` (with a warning): embeddings
    /// are an improvement, never a reason not to start.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let get = |k: &str| get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let provider = match get("CAIRN_EMBED_PROVIDER")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("local") => Provider::Local,
            Some("openai") => Provider::OpenAi,
            Some("none" | "off") => Provider::None,
            Some(other) => {
                tracing::warn!(
                    provider = other,
                    "unknown CAIRN_EMBED_PROVIDER: embeddings are off"
                );
                Provider::None
            }
        };
        let model_dir = get("CAIRN_EMBED_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let home = get("HOME").unwrap_or_else(|| ".".into());
                PathBuf::from(home).join(".cache/cairn/models/all-minilm-l6-v2")
            });
        let precision = match get("CAIRN_EMBED_PRECISION")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("int8") => Precision::Int8,
            Some("f32") => Precision::F32,
            Some(other) => {
                tracing::warn!(precision = other, "unknown CAIRN_EMBED_PRECISION: int8 is used");
                Precision::Int8
            }
        };
        let api_key = get("CAIRN_EMBED_API_KEY").or_else(|| {
            get("CAIRN_EMBED_API_KEY_FILE").and_then(|path| match std::fs::read_to_string(&path) {
                Ok(key) => Some(key.trim().to_string()).filter(|k| !k.is_empty()),
                Err(e) => {
                    tracing::warn!(path, error = %e, "CAIRN_EMBED_API_KEY_FILE not readable");
                    None
                }
            })
        });
        let timeout = get("CAIRN_EMBED_TIMEOUT_MS")
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(10));
        Self {
            provider,
            model_dir,
            precision,
            base_url: get("CAIRN_EMBED_BASE_URL"),
            api_key,
            model: get("CAIRN_EMBED_MODEL"),
            timeout,
            attempts: 3,
        }
    }

    /// Embeddings off.
    pub fn none() -> Self {
        Self::from_lookup(|k| (k == "CAIRN_EMBED_PROVIDER").then(|| "none".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_spellings() {
        let c = EmbedConfig::from_lookup(|k| (k == "HOME").then(|| "/home/x".into()));
        assert_eq!(c.provider, Provider::Local);
        assert_eq!(c.precision, Precision::Int8);
        assert_eq!(
            c.model_dir,
            PathBuf::from("/home/x/.cache/cairn/models/all-minilm-l6-v2")
        );
        let c = EmbedConfig::from_lookup(|k| match k {
            "CAIRN_EMBED_PROVIDER" => Some(" OpenAI ".into()),
            "CAIRN_EMBED_BASE_URL" => Some("http://h/v1".into()),
            "CAIRN_EMBED_TIMEOUT_MS" => Some("250".into()),
            "CAIRN_EMBED_PRECISION" => Some("F32".into()),
            _ => None,
        });
        assert_eq!(c.precision, Precision::F32);
        assert_eq!(c.provider, Provider::OpenAi);
        assert_eq!(c.base_url.as_deref(), Some("http://h/v1"));
        assert_eq!(c.timeout, Duration::from_millis(250));
        assert_eq!(EmbedConfig::none().provider, Provider::None);
        let c = EmbedConfig::from_lookup(|k| (k == "CAIRN_EMBED_PROVIDER").then(|| "bogus".into()));
        assert_eq!(c.provider, Provider::None);
    }

    #[test]
    fn key_from_a_file() {
        let path = std::env::temp_dir().join(format!("cairn-embed-key-{}", std::process::id()));
        std::fs::write(&path, "sk-test\n").unwrap();
        let c = EmbedConfig::from_lookup(|k| {
            (k == "CAIRN_EMBED_API_KEY_FILE").then(|| path.display().to_string())
        });
        assert_eq!(c.api_key.as_deref(), Some("sk-test"));
        std::fs::remove_file(path).unwrap();
    }
}
