//! Finding memory: search and the context a next session gets — the
//! server's retrieval engine and context builder, on the client's project.

use super::Cairn;
use crate::tenancy::Viewer;
use crate::{
    context::{self, ContextRequest, Mode},
    error::Error,
    search::{self, Filters, Hit, Order, SearchRequest},
};

impl Cairn {
    /// The `limit` (1..=100) memories best matching `query`, by words and,
    /// with the embedding model, by meaning; summaries too.
    pub async fn search(&self, query: &str, limit: i64) -> Result<Vec<Hit>, Error> {
        let request = SearchRequest {
            project_id: self.project.id,
            query: Some(query.to_string()),
            // The program's own database: every memory is its own.
            filters: Filters {
                viewer: Viewer::ALL,
                ..Filters::default()
            },
            include_summaries: true,
            order: Order::Relevance,
            limit,
            cursor: None,
            mode: None,
            as_of: None,
        };
        Ok(search::search(&self.engine, &request).await?.hits)
    }

    /// The markdown a next session would get at its start (what SessionStart
    /// injects), led by the memories most related to `query` when given.
    pub async fn context(&self, query: Option<&str>) -> Result<String, Error> {
        let request = ContextRequest {
            project_id: self.project.id,
            query,
            budget_tokens: None,
            max_tokens: None,
            mode: Mode::Full,
            as_of: None,
            branch: None,
            changed: &[],
            viewer: Viewer::ALL,
        };
        Ok(context::build(&self.engine, &request).await?.selection.markdown)
    }
}
