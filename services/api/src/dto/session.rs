//! The `session` object.

use cairn_shared::time::{opt_epoch_ms, to_epoch_ms};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::sessions::SessionRow;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionDto {
    pub id: Uuid,
    pub project_id: Uuid,
    pub team_id: Uuid,
    pub external_session_id: String,
    pub content_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub platform_source: Option<String>,
    /// `active` or `ended`.
    pub status: String,
    pub generation_status: String,
    /// Number of user prompts (turns) so far.
    pub prompt_count: i32,
    pub metadata: serde_json::Value,
    pub started_at_epoch: i64,
    pub ended_at_epoch: Option<i64>,
    pub last_generated_at_epoch: Option<i64>,
    pub created_at_epoch: i64,
    pub updated_at_epoch: i64,
}

impl From<SessionRow> for SessionDto {
    fn from(r: SessionRow) -> Self {
        Self {
            id: r.id,
            project_id: r.project_id,
            team_id: r.team_id,
            external_session_id: r.external_session_id,
            content_session_id: r.content_session_id,
            agent_id: r.agent_id,
            agent_type: r.agent_type,
            platform_source: r.platform_source.or(Some(r.agent)),
            status: r.status,
            generation_status: r.generation_status,
            prompt_count: r.prompt_counter,
            metadata: r.metadata,
            started_at_epoch: to_epoch_ms(r.started_at),
            ended_at_epoch: opt_epoch_ms(r.ended_at),
            last_generated_at_epoch: opt_epoch_ms(r.last_generated_at),
            created_at_epoch: to_epoch_ms(r.created_at),
            updated_at_epoch: to_epoch_ms(r.updated_at),
        }
    }
}
