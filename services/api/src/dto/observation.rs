//! The `observation` object (also what `/v1/memories` returns as `memory`).

use cairn_shared::time::to_epoch_ms;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::observations::ObservationRow;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationDto {
    pub id: Uuid,
    pub project_id: Uuid,
    pub team_id: Uuid,
    pub server_session_id: Option<Uuid>,
    pub kind: String,
    pub content: String,
    /// The structured fields: type, title, subtitle, facts, narrative, concepts,
    /// filesRead, filesModified, provider, model, origin.
    pub metadata: serde_json::Value,
    pub created_at_epoch: i64,
    pub updated_at_epoch: i64,
}

impl From<ObservationRow> for ObservationDto {
    fn from(r: ObservationRow) -> Self {
        let mut metadata = r.metadata;
        if let Some(map) = metadata.as_object_mut() {
            let fields = serde_json::json!({
                "type": r.kind, "title": r.title, "subtitle": r.subtitle, "facts": r.facts,
                "narrative": r.narrative, "concepts": r.concepts, "filesRead": r.files_read,
                "filesModified": r.files_modified, "provider": r.provider, "model": r.model,
                "origin": r.origin, "promptNumber": r.prompt_number,
            });
            if let serde_json::Value::Object(fields) = fields {
                map.extend(fields);
            }
        }
        Self {
            id: r.id,
            project_id: r.project_id,
            team_id: r.team_id,
            server_session_id: r.session_id,
            kind: r.kind,
            content: r.content,
            metadata,
            created_at_epoch: to_epoch_ms(r.created_at),
            updated_at_epoch: to_epoch_ms(r.updated_at),
        }
    }
}
