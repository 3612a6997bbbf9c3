//! The `observation` object (also what `/v1/memories` returns as `memory`).

use cairn_shared::time::to_epoch_ms;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::observations::ObservationRow;
use cairn_core::memory::lifecycle::MemoryState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationDto {
    pub id: Uuid,
    pub project_id: Uuid,
    pub team_id: Uuid,
    pub server_session_id: Option<Uuid>,
    pub kind: String,
    /// The text of the memory: as written for a manual memory; for a
    /// generated observation (which has no text of its own), its title, then
    /// its narrative (or its facts, when there is no narrative).
    pub content: String,
    /// The structured fields: type, title, subtitle, facts, narrative, concepts,
    /// filesRead, filesModified, provider, model, origin.
    pub metadata: serde_json::Value,
    pub created_at_epoch: i64,
    pub updated_at_epoch: i64,
}

/// A generated observation read as text: title, then narrative, or the facts as a list.
fn rendition(r: &ObservationRow) -> String {
    let body = if r.narrative.trim().is_empty() {
        r.facts
            .iter()
            .map(|f| f.trim())
            .filter(|f| !f.is_empty())
            .map(|f| format!("- {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        r.narrative.trim().to_string()
    };
    [r.title.trim(), body.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl From<ObservationRow> for ObservationDto {
    fn from(r: ObservationRow) -> Self {
        let content = if r.content.trim().is_empty() {
            rendition(&r)
        } else {
            r.content
        };
        let mut metadata = r.metadata;
        if let Some(map) = metadata.as_object_mut() {
            let fields = serde_json::json!({
                "type": r.kind, "title": r.title, "subtitle": r.subtitle, "facts": r.facts,
                "narrative": r.narrative, "concepts": r.concepts, "filesRead": r.files_read,
                "filesModified": r.files_modified, "provider": r.provider, "model": r.model,
                "origin": r.origin, "promptNumber": r.prompt_number,
            });
            // Stale, superseded, …: said where it applies (live is the default).
            if let Some(state) = r.state.filter(|s| *s != MemoryState::Live) {
                map.insert("state".into(), state.as_str().into());
            }
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
            content,
            metadata,
            created_at_epoch: to_epoch_ms(r.created_at),
            updated_at_epoch: to_epoch_ms(r.updated_at),
        }
    }
}
