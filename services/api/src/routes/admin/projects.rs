//! Create and list a team's projects, and set what memory each gives back.

use axum::{extract::State, http::StatusCode};
use cairn_shared::{
    db::is_unique_violation,
    tenancy::{is_valid_slug, projects},
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::ProjectDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::usage,
};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewProject {
    /// Defaults to the caller's team; another team needs superadmin.
    pub team_id: Option<Uuid>,
    /// Lowercase letters, digits, `-`, `_` and `.`.
    pub slug: String,
    pub name: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectResponse {
    pub project: ProjectDto,
    /// The project's daily LLM token budget after a `PATCH` (null: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    pub llm_daily_token_budget: Option<Option<i64>>,
}

#[derive(Serialize, ToSchema)]
pub struct ProjectList {
    pub projects: Vec<ProjectDto>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct TeamQuery {
    pub team_id: Option<Uuid>,
}

/// Create a project in a team (admin).
#[utoipa::path(post, path = "/v1/admin/projects", tag = "admin", request_body = NewProject,
    responses((status = 201, body = ProjectResponse), (status = 409, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_project(
    State(state): State<AppState>,
    auth: Auth,
    Json(body): Json<NewProject>,
) -> ApiResult<(StatusCode, Json<ProjectResponse>)> {
    let team_id = super::acting_team(&auth, body.team_id)?;
    if auth.project_id.is_some() {
        return Err(ApiError::forbidden(
            "team_token_required",
            "project tokens cannot create projects",
        ));
    }
    if !is_valid_slug(&body.slug) {
        return Err(ApiError::unprocessable(
            "invalid_slug",
            "slug: lowercase letters, digits, `-`, `_`, `.`; up to 63",
        ));
    }
    let name = body
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(&body.slug)
        .to_string();
    if name.len() > 200 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`name` is longer than 200 characters",
        ));
    }
    let mut tx = state.pool.begin().await?;
    let project = projects::create_project(&mut *tx, team_id, &body.slug, &name)
        .await
        .map_err(|e| {
            if is_unique_violation(&e, "projects_team_id_slug_key") {
                ApiError::conflict("slug_taken", "the team has a project with this slug")
            } else {
                e.into()
            }
        })?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id: Some(project.id),
            kind: "project",
            id: project.id,
        },
        "project.create",
        serde_json::json!({"slug": project.slug}),
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(ProjectResponse {
            project: project.into(),
            llm_daily_token_budget: None,
        }),
    ))
}

/// List a team's projects (admin).
#[utoipa::path(get, path = "/v1/admin/projects", tag = "admin", params(TeamQuery),
    responses((status = 200, body = ProjectList)), security(("bearer" = [])))]
pub async fn list_projects(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<ProjectList>> {
    let team_id = super::acting_team(&auth, q.team_id)?;
    let projects = projects::list_projects(&state.pool, team_id).await?;
    let visible = projects
        .into_iter()
        .filter(|p| auth.can_see(p.team_id, p.id) || team_id != auth.team_id);
    Ok(Json(ProjectList {
        projects: visible.map(Into::into).collect(),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSettingsInput {
    /// 200..=50000 tokens for the SessionStart context.
    pub context_budget_tokens: Option<i32>,
    /// Answer UserPromptSubmit with the memories most related to the prompt.
    pub prompt_context: Option<bool>,
    /// 100..=5000 tokens for those memories (the block's header takes about 35).
    pub prompt_context_budget_tokens: Option<i32>,
    /// Answer PreToolUse (Read, Edit, Write, …) with the live memories about
    /// the tool's file (on by default).
    pub file_memories: Option<bool>,
    /// Archive observations older than this many days (1..=36500) and not
    /// retrieved since: kept and found by id, never injected or searched.
    /// `null` keeps memories for ever (the default); absent leaves it.
    #[serde(default, deserialize_with = "super::present")]
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 36500)]
    pub retention_days: Option<Option<i32>>,
    /// Model tokens (input plus output) the generator may spend per UTC day
    /// for this project; `null` removes the budget, absent leaves it. Past
    /// 80 % it degrades to the heuristic for turn summaries and routine
    /// turns; at 100 % the heuristic answers every job.
    #[serde(default, deserialize_with = "super::present")]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub llm_daily_token_budget: Option<Option<i64>>,
    /// `team` (every memory visible to the team, the default) or
    /// `private-first`: a memory reaches its author's agents at once and the
    /// rest of the team once promoted; raw prompts and events are the
    /// author's and admins' only.
    pub memory_visibility: Option<String>,
    /// In a private-first project, observation kinds promoted at once (`decision`, …).
    pub promote_kinds: Option<Vec<String>>,
    /// In a private-first project, promote a private memory nobody rejected
    /// after this many days (1..=365); `null` removes the rule.
    #[serde(default, deserialize_with = "super::present")]
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 365)]
    pub promote_after_days: Option<Option<i32>>,
    /// Drop raw events (not memories) this many days after arrival, once
    /// their turn is digested (0..=36500; 0 keeps them for ever); `null`
    /// follows the deployment's `CAIRN_RAW_EVENT_RETENTION_DAYS`.
    #[serde(default, deserialize_with = "super::present")]
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 36500)]
    pub raw_event_retention_days: Option<Option<i32>>,
}

/// A number of days that may be cleared (`null`) or must lie in `lo..=hi`.
fn days_in(value: Option<Option<i32>>, lo: i32, hi: i32, field: &str) -> ApiResult<()> {
    match value.flatten() {
        Some(d) if !(lo..=hi).contains(&d) => Err(ApiError::unprocessable(
            "invalid_field",
            format!("`{field}` is {lo}..={hi} or null"),
        )),
        _ => Ok(()),
    }
}

/// Set a project's memory settings (admin; audited).
#[utoipa::path(patch, path = "/v1/admin/projects/{id}", tag = "admin", request_body = ProjectSettingsInput,
    params(("id" = String, Path, description = "Project id or slug")),
    responses((status = 200, body = ProjectResponse), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn update_project(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Json(body): Json<ProjectSettingsInput>,
) -> ApiResult<Json<ProjectResponse>> {
    auth.require(cairn_shared::auth::Scope::Admin)?;
    let project = auth.project(&state, Some(&id)).await?;
    let in_range = |v: Option<i32>, lo: i32, hi: i32| v.is_none_or(|v| (lo..=hi).contains(&v));
    if !in_range(body.context_budget_tokens, 200, 50_000)
        || !in_range(body.prompt_context_budget_tokens, 100, 5_000)
    {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`contextBudgetTokens` is 200..=50000 and `promptContextBudgetTokens` 100..=5000",
        ));
    }
    super::check_budget(body.llm_daily_token_budget)?;
    if body
        .memory_visibility
        .as_deref()
        .is_some_and(|v| !matches!(v, "team" | "private-first"))
    {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`memoryVisibility` is `team` or `private-first`",
        ));
    }
    days_in(body.promote_after_days, 1, 365, "promoteAfterDays")?;
    days_in(body.retention_days, 1, 36_500, "retentionDays")?;
    days_in(body.raw_event_retention_days, 0, 36_500, "rawEventRetentionDays")?;
    let settings = projects::MemorySettings {
        context_budget_tokens: body.context_budget_tokens,
        prompt_context: body.prompt_context,
        prompt_context_budget_tokens: body.prompt_context_budget_tokens,
        file_memories: body.file_memories,
        retention_days: body.retention_days,
        memory_visibility: body.memory_visibility.clone(),
        promote_kinds: body.promote_kinds.clone(),
        promote_after_days: body.promote_after_days,
        raw_event_retention_days: body.raw_event_retention_days,
    };
    let mut tx = state.pool.begin().await?;
    let updated = projects::update_memory_settings(&mut *tx, project.team_id, project.id, settings)
        .await?
        .ok_or_else(|| ApiError::not_found("project_not_found", "no such project"))?;
    let llm_budget = match body.llm_daily_token_budget {
        Some(budget) => usage::set_project_budget(&mut *tx, project.team_id, project.id, budget).await?,
        None => Some(usage::project_budget(&mut *tx, project.team_id, project.id).await?),
    }
    .ok_or_else(|| ApiError::not_found("project_not_found", "no such project"))?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id: project.team_id,
            project_id: Some(project.id),
            kind: "project",
            id: project.id,
        },
        "project.update",
        serde_json::json!({
            "contextBudgetTokens": updated.context_budget_tokens,
            "promptContext": updated.prompt_context,
            "promptContextBudgetTokens": updated.prompt_context_budget_tokens,
            "fileMemories": updated.file_memories,
            "retentionDays": updated.retention_days,
            "llmDailyTokenBudget": llm_budget,
            "memoryVisibility": updated.memory_visibility,
            "promoteKinds": updated.promote_kinds,
            "promoteAfterDays": updated.promote_after_days,
            "rawEventRetentionDays": updated.raw_event_retention_days,
        }),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(ProjectResponse {
        project: updated.into(),
        llm_daily_token_budget: Some(llm_budget),
    }))
}
