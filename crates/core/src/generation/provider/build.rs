//! A configuration made into its provider.

use std::sync::Arc;

use super::{Provider, ProviderConfig, anthropic::Anthropic, heuristic::Heuristic, openai::OpenAi};

/// The provider a configuration describes, with its own pooled HTTP client.
pub fn build_provider(config: &ProviderConfig) -> anyhow::Result<Arc<dyn Provider>> {
    Ok(match config {
        ProviderConfig::Heuristic => Arc::new(Heuristic),
        ProviderConfig::Anthropic(config) => Arc::new(Anthropic::new(config.clone())?),
        ProviderConfig::OpenAi(config) => Arc::new(OpenAi::new(config.clone())?),
    })
}
