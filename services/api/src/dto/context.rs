//! The context as JSON, for API clients (`GET /v1/projects/{id}/context`).

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::context::{
    Built,
    gather::{ObservationItem, SummaryItem},
    markdown,
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextDto {
    pub project_id: Uuid,
    pub budget_tokens: usize,
    /// Of the markdown below.
    pub estimated_tokens: usize,
    /// Newest first.
    pub summaries: Vec<ContextSummary>,
    /// The newest plans (kind `plan`), shown under "Plans".
    pub plans: Vec<IndexEntry>,
    /// Recent observations, newest first.
    pub index: Vec<IndexEntry>,
    /// The most relevant observations in full.
    pub details: Vec<ContextObservation>,
    pub omitted_observations: i64,
    /// True when the project has more than the count says (it is capped).
    pub omitted_capped: bool,
    /// What an agent gets.
    pub markdown: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextSummary {
    pub id: Uuid,
    pub server_session_id: Uuid,
    pub scope: String,
    pub request: String,
    pub completed: String,
    pub learned: String,
    pub next_steps: String,
    pub created_at_epoch: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub created_at_epoch: i64,
    /// What fetching it in full costs.
    pub estimated_tokens: usize,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextObservation {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub narrative: String,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub created_at_epoch: i64,
}

impl From<&SummaryItem> for ContextSummary {
    fn from(s: &SummaryItem) -> Self {
        Self {
            id: s.id,
            server_session_id: s.session_id,
            scope: s.scope.clone(),
            request: s.request.clone(),
            completed: s.completed.clone(),
            learned: s.learned.clone(),
            next_steps: s.next_steps.clone(),
            created_at_epoch: s.created_at.timestamp_millis(),
        }
    }
}

impl From<&ObservationItem> for IndexEntry {
    fn from(o: &ObservationItem) -> Self {
        Self {
            id: o.id,
            kind: o.kind.clone(),
            title: o.title.clone(),
            created_at_epoch: o.created_at.timestamp_millis(),
            estimated_tokens: markdown::detail_tokens(o),
        }
    }
}

impl From<&ObservationItem> for ContextObservation {
    fn from(o: &ObservationItem) -> Self {
        Self {
            id: o.id,
            kind: o.kind.clone(),
            title: o.title.clone(),
            subtitle: o.subtitle.clone(),
            facts: o.facts.clone(),
            narrative: o.narrative.clone(),
            files_read: o.files_read.clone(),
            files_modified: o.files_modified.clone(),
            created_at_epoch: o.created_at.timestamp_millis(),
        }
    }
}

impl From<Built> for ContextDto {
    fn from(b: Built) -> Self {
        let s = b.selection;
        Self {
            project_id: b.project_id,
            budget_tokens: b.budget_tokens,
            estimated_tokens: cairn_shared::tokens::estimate(&s.markdown),
            summaries: s.summaries.iter().map(Into::into).collect(),
            plans: s.plans.iter().map(Into::into).collect(),
            index: s.index.iter().map(Into::into).collect(),
            details: s.details.iter().map(Into::into).collect(),
            omitted_observations: s.omitted,
            omitted_capped: s.omitted_capped,
            markdown: s.markdown,
        }
    }
}
