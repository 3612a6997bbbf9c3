//! `PATCH /v1/memories/{id}`: editing an observation's text (audited, under
//! the rule of the delete: any observation of the caller's projects with
//! `admin`, else only a manual memory the same token wrote). Full-text
//! search follows at once (the `search` trigger and the retrieval feed);
//! the stored vector is deleted in the same transaction (every replica's
//! index drops it from the feed) for the generator's backfill to embed the
//! new text.

use axum::extract::State;
use cairn_shared::auth::Scope;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path},
    routes::memories::MemoryResponse,
    state::AppState,
    store::observations::{self, Edit},
};

/// The observation types an edit may set: the generator's vocabulary and
/// `note`, the default of a manual memory.
pub const KNOWN_KINDS: [&str; 9] = [
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
    "security_alert",
    "security_note",
    "note",
];
const MAX_TITLE_CHARS: usize = 300;
const MAX_SUBTITLE_CHARS: usize = 500;
const MAX_NARRATIVE_BYTES: usize = 64 * 1024;
const MAX_LIST_ITEMS: usize = 50;
const MAX_FACT_CHARS: usize = 1_000;
const MAX_CONCEPT_CHARS: usize = 100;

/// Any subset of the fields; those left out keep their value.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryEdit {
    /// 1 to 300 characters.
    pub title: Option<String>,
    /// At most 500 characters.
    pub subtitle: Option<String>,
    /// At most 64 KiB.
    pub narrative: Option<String>,
    /// At most 50, each 1 to 1,000 characters.
    pub facts: Option<Vec<String>>,
    /// At most 50, each 1 to 100 characters.
    pub concepts: Option<Vec<String>>,
    /// bugfix, feature, refactor, change, discovery, decision, security_alert, security_note or note.
    pub kind: Option<String>,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::unprocessable("invalid_field", message)
}

/// Checks the edit and filters its text for privacy, as any stored text is.
fn checked(state: &AppState, mut edit: MemoryEdit) -> ApiResult<MemoryEdit> {
    let filter = |s: &str| state.privacy.filter_text(s).0.trim().to_string();
    if edit.title.is_none()
        && edit.subtitle.is_none()
        && edit.narrative.is_none()
        && edit.facts.is_none()
        && edit.concepts.is_none()
        && edit.kind.is_none()
    {
        return Err(invalid(
            "nothing to change: give title, subtitle, narrative, facts, concepts or kind",
        ));
    }
    if let Some(title) = edit.title.as_deref().map(filter) {
        if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
            return Err(invalid("`title` is 1 to 300 characters"));
        }
        edit.title = Some(title);
    }
    if let Some(subtitle) = edit.subtitle.as_deref().map(filter) {
        if subtitle.chars().count() > MAX_SUBTITLE_CHARS {
            return Err(invalid("`subtitle` is at most 500 characters"));
        }
        edit.subtitle = Some(subtitle);
    }
    if let Some(narrative) = &edit.narrative {
        if narrative.len() > MAX_NARRATIVE_BYTES {
            return Err(invalid("`narrative` is over 64 KiB"));
        }
        edit.narrative = Some(filter(narrative));
    }
    for (name, list, max_chars) in [
        ("facts", &mut edit.facts, MAX_FACT_CHARS),
        ("concepts", &mut edit.concepts, MAX_CONCEPT_CHARS),
    ] {
        if let Some(items) = list {
            if items.len() > MAX_LIST_ITEMS {
                return Err(invalid(format!("`{name}` holds at most 50 items")));
            }
            let filtered: Vec<String> = items.iter().map(|s| filter(s)).collect();
            if filtered
                .iter()
                .any(|s| s.is_empty() || s.chars().count() > max_chars)
            {
                return Err(invalid(format!(
                    "each of `{name}` is 1 to {max_chars} characters"
                )));
            }
            *items = filtered;
        }
    }
    if let Some(kind) = &edit.kind
        && !KNOWN_KINDS.contains(&kind.as_str())
    {
        return Err(invalid(format!("`kind` is one of {}", KNOWN_KINDS.join(", "))));
    }
    Ok(edit)
}

/// Edit a memory's title, subtitle, narrative, facts, concepts or kind
/// (audited): any observation of the caller's projects with `admin`;
/// without it, only a manual memory the same token wrote.
#[utoipa::path(patch, path = "/v1/memories/{id}", tag = "memories", params(("id" = Uuid, Path)),
    request_body = MemoryEdit,
    responses((status = 200, body = MemoryResponse, description = "The memory after the edit"),
              (status = 401, body = crate::error::ErrorBody, description = "No credentials"),
              (status = 403, body = crate::error::ErrorBody, description = "Not this token's memory to edit"),
              (status = 404, body = crate::error::ErrorBody, description = "No such memory for this token"),
              (status = 422, body = crate::error::ErrorBody, description = "A field is invalid (`invalid_field`)")),
    security(("bearer" = [])))]
pub async fn update_memory(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Json(input): Json<MemoryEdit>,
) -> ApiResult<Json<MemoryResponse>> {
    // Refused before the input is read, as every write route is.
    auth.require(Scope::Ingest)
        .or_else(|_| auth.require(Scope::Admin))?;
    let edit = checked(&state, input)?;
    let mut tx = state.pool.begin().await?;
    let target = crate::routes::memories::lock_to_change(&mut tx, &auth, id, "editing").await?;
    let changes = Edit {
        title: edit.title.as_deref(),
        subtitle: edit.subtitle.as_deref(),
        narrative: edit.narrative.as_deref(),
        facts: edit.facts.as_deref(),
        concepts: edit.concepts.as_deref(),
        kind: edit.kind.as_deref(),
    };
    let row = observations::update(&mut tx, target.project_id, id, &changes)
        .await?
        .ok_or_else(|| ApiError::not_found("memory_not_found", "no such memory"))?;
    let fields: Vec<&str> = [
        ("title", changes.title.is_some()),
        ("subtitle", changes.subtitle.is_some()),
        ("narrative", changes.narrative.is_some()),
        ("facts", changes.facts.is_some()),
        ("concepts", changes.concepts.is_some()),
        ("kind", changes.kind.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, given)| given.then_some(name))
    .collect();
    crate::routes::admin::record(
        &mut *tx,
        &auth,
        crate::routes::admin::Target {
            team_id: auth.team_id,
            project_id: Some(target.project_id),
            kind: "observation",
            id,
        },
        "memory.update",
        serde_json::json!({
            "origin": target.origin,
            "fields": fields,
            "before": { "kind": target.kind, "title": target.title },
        }),
    )
    .await?;
    tx.commit().await?;
    state
        .live
        .publish(
            row.project_id,
            &serde_json::json!({
                "type": "observation.updated",
                "id": id,
                "projectId": row.project_id,
                "title": row.title,
            }),
        )
        .await;
    Ok(Json(MemoryResponse { memory: row.into() }))
}
