//! Create and list teams.

use axum::{extract::State, http::StatusCode};
use cairn_shared::{
    auth::Scope,
    db::is_unique_violation,
    tenancy::{is_valid_slug, teams},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    auth::Auth,
    dto::TeamDto,
    error::{ApiError, ApiResult},
    extract::Json,
    state::AppState,
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
