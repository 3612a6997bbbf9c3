//! Search hits on the wire (`GET /v1/search`): camelCase, epoch-millisecond times.

use cairn_shared::time::to_epoch_ms;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::search::Hit;
use crate::{dto::ObservationDto, store::observations::SummaryRow};

/// A turn or session summary found by a search.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDto {
    pub id: Uuid,
    pub server_session_id: Uuid,
    /// `turn` or `session`.
    pub scope: String,
    pub prompt_number: Option<i32>,
    pub request: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub created_at_epoch: i64,
}

impl From<SummaryRow> for SummaryDto {
    fn from(r: SummaryRow) -> Self {
        Self {
            id: r.id,
            server_session_id: r.session_id,
            scope: r.scope,
            prompt_number: r.prompt_number,
            request: r.request,
            learned: r.learned,
            completed: r.completed,
            next_steps: r.next_steps,
            created_at_epoch: to_epoch_ms(r.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HitType {
    Observation,
    Summary,
}

/// One hit: an observation or a summary, with its score.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HitDto {
    #[serde(rename = "type")]
    pub kind: HitType,
    /// Text rank × recency bonus (see the search README); 0 without a query.
    pub score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<ObservationDto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<SummaryDto>,
}

impl From<Hit> for HitDto {
    fn from(hit: Hit) -> Self {
        match hit {
            Hit::Observation { row, score } => Self {
                kind: HitType::Observation,
                score,
                observation: Some(row.into()),
                summary: None,
            },
            Hit::Summary { row, score } => Self {
                kind: HitType::Summary,
                score,
                observation: None,
                summary: Some(row.into()),
            },
        }
    }
}
