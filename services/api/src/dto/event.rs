//! The `event` object.

use cairn_shared::time::to_epoch_ms;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::events::EventRow;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDto {
    pub id: Uuid,
    pub project_id: Uuid,
    pub team_id: Uuid,
    pub server_session_id: Option<Uuid>,
    pub source_adapter: String,
    pub source_type: String,
    pub source_event_id: Option<String>,
    pub event_type: String,
    pub platform_source: Option<String>,
    /// The turn (user prompt number) the event belongs to.
    pub prompt_number: Option<i32>,
    pub generation_job_id: Option<Uuid>,
    pub payload: serde_json::Value,
    pub metadata: serde_json::Value,
    pub occurred_at_epoch: i64,
    pub received_at_epoch: i64,
    pub created_at_epoch: i64,
}

impl From<EventRow> for EventDto {
    fn from(r: EventRow) -> Self {
        Self {
            id: r.id,
            project_id: r.project_id,
            team_id: r.team_id,
            server_session_id: r.session_id,
            source_adapter: r.source_adapter,
            source_type: r.source_type,
            source_event_id: r.source_event_id,
            event_type: r.event_type,
            platform_source: r.platform_source,
            prompt_number: r.prompt_number,
            generation_job_id: r.job_id,
            payload: r.payload,
            metadata: r.metadata,
            occurred_at_epoch: to_epoch_ms(r.occurred_at),
            received_at_epoch: to_epoch_ms(r.received_at),
            created_at_epoch: to_epoch_ms(r.created_at),
        }
    }
}
