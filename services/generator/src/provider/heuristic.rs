//! The offline, deterministic provider.

use super::{Completion, Provider, ProviderError, Request};

pub struct Heuristic;

#[async_trait::async_trait]
impl Provider for Heuristic {
    fn name(&self) -> &'static str {
        "heuristic"
    }
    fn model(&self) -> &str {
        "heuristic-v1"
    }
    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError> {
        let _ = request;
        unimplemented!("heuristic")
    }
}
