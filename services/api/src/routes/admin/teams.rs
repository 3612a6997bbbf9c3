//! Create and list teams, and set a team's daily LLM token budget.

use axum::{extract::State, http::StatusCode};
use cairn_shared::{
    auth::Scope,
    db::is_unique_violation,
    tenancy::{is_valid_slug, teams},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    dto::TeamDto,
    error::{ApiError, ApiResult},
    extract::{Json, Path},
    state::AppState,
    store::usage,
};

#[derive(Deserialize, ToSchema)]
pub struct NewTeam {
    /// Lowercase letters, digits, `-` and `_`.
    pub slug: String,
    pub name: String,
}

#[derive(Serialize, ToSchema)]
pub struct TeamResponse {
    pub team: TeamDto,
}

#[derive(Serialize, ToSchema)]
pub struct TeamList {
    pub teams: Vec<TeamDto>,
}

/// Create a team (superadmin).
#[utoipa::path(post, path = "/v1/admin/teams", tag = "admin", request_body = NewTeam,
    responses((status = 201, body = TeamResponse), (status = 409, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_team(
    State(state): State<AppState>,
    auth: Auth,
    Json(body): Json<NewTeam>,
) -> ApiResult<(StatusCode, Json<TeamResponse>)> {
    auth.require(Scope::Superadmin)?;
    if !is_valid_slug(&body.slug) || body.slug.contains('.') {
        return Err(ApiError::unprocessable(
            "invalid_slug",
            "slug: lowercase letters, digits, `-`, `_`; up to 63",
        ));
    }
    if body.name.trim().is_empty() || body.name.len() > 200 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`name` must be 1 to 200 characters",
        ));
    }
    let mut tx = state.pool.begin().await?;
    let team = teams::create_team(&mut *tx, &body.slug, body.name.trim())
        .await
        .map_err(|e| {
            if is_unique_violation(&e, "teams_slug_key") {
                ApiError::conflict("slug_taken", "a team with this slug exists")
            } else {
                e.into()
            }
        })?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id: team.id,
            project_id: None,
            kind: "team",
            id: team.id,
        },
        "team.create",
        serde_json::json!({"slug": team.slug}),
    )
    .await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(TeamResponse { team: team.into() })))
}

/// List teams: all of them for a superadmin, the caller's own otherwise.
#[utoipa::path(get, path = "/v1/admin/teams", tag = "admin", responses((status = 200, body = TeamList)),
    security(("bearer" = [])))]
pub async fn list_teams(State(state): State<AppState>, auth: Auth) -> ApiResult<Json<TeamList>> {
    auth.require(Scope::Admin)?;
    let only = (!auth.scopes.contains(&Scope::Superadmin)).then_some(auth.team_id);
    let teams = teams::list_teams(&state.pool, only).await?;
    Ok(Json(TeamList {
        teams: teams.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamSettingsInput {
    /// Model tokens the generator may spend per UTC day for all the team's
    /// projects together; `null` removes the budget, absent leaves it.
    #[serde(default, deserialize_with = "super::present")]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub llm_daily_token_budget: Option<Option<i64>>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamSettings {
    pub team_id: Uuid,
    pub llm_daily_token_budget: Option<i64>,
}

/// Set a team's daily LLM token budget (a team-wide admin of that team, or
/// a superadmin; audited).
#[utoipa::path(patch, path = "/v1/admin/teams/{id}", tag = "admin", request_body = TeamSettingsInput,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = TeamSettings), (status = 403, body = crate::error::ErrorBody),
              (status = 404, body = crate::error::ErrorBody), (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn update_team(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Json(body): Json<TeamSettingsInput>,
) -> ApiResult<Json<TeamSettings>> {
    let team_id = super::acting_team(&auth, Some(id))?;
    if auth.project_id.is_some() {
        return Err(ApiError::forbidden(
            "insufficient_scope",
            "a project-scoped token cannot change team settings",
        ));
    }
    super::check_budget(body.llm_daily_token_budget)?;
    let Some(budget) = body.llm_daily_token_budget else {
        return Err(ApiError::unprocessable(
            "missing_field",
            "`llmDailyTokenBudget` is the setting to change",
        ));
    };
    let mut tx = state.pool.begin().await?;
    let budget = usage::set_team_budget(&mut *tx, team_id, budget)
        .await?
        .ok_or_else(|| ApiError::not_found("team_not_found", "no such team"))?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id: None,
            kind: "team",
            id: team_id,
        },
        "team.update",
        serde_json::json!({ "llmDailyTokenBudget": budget }),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(TeamSettings {
        team_id,
        llm_daily_token_budget: budget,
    }))
}
