//! Project rules (admin; audited): map a git remote or a path prefix to a
//! project, so one team token serves every repository of the team.

use axum::{extract::State, http::StatusCode};
use cairn_shared::{
    auth::Scope,
    db::is_unique_violation,
    tenancy::project_rules::{self, ProjectRule, RuleKind},
    time::to_epoch_ms,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path},
    state::AppState,
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRuleDto {
    pub id: Uuid,
    pub project_id: Uuid,
    /// `git_remote` or `path_prefix`.
    #[schema(value_type = String)]
    pub kind: RuleKind,
    /// The normalised pattern: `host/owner/repo`, or an absolute path.
    pub pattern: String,
    pub created_at_epoch: i64,
}

impl From<ProjectRule> for ProjectRuleDto {
    fn from(r: ProjectRule) -> Self {
        Self {
            id: r.id,
            project_id: r.project_id,
            kind: r.kind,
            pattern: r.pattern,
            created_at_epoch: to_epoch_ms(r.created_at),
        }
    }
}

#[derive(Deserialize, ToSchema)]
pub struct NewProjectRule {
    /// `git_remote` or `path_prefix`.
    #[schema(value_type = String)]
    pub kind: RuleKind,
    /// A remote as `git remote -v` shows it (any form), or an absolute path.
    pub pattern: String,
}

#[derive(Serialize, ToSchema)]
pub struct ProjectRuleList {
    pub rules: Vec<ProjectRuleDto>,
}

#[derive(Serialize, ToSchema)]
pub struct ProjectRuleResponse {
    pub rule: ProjectRuleDto,
}

/// List a project's rules (admin).
#[utoipa::path(get, path = "/v1/admin/projects/{id}/rules", tag = "admin",
    params(("id" = String, Path, description = "Project id or slug")),
    responses((status = 200, body = ProjectRuleList, description = "The rules"),
              (status = 404, body = crate::error::ErrorBody, description = "No such project")),
    security(("bearer" = [])))]
pub async fn list_project_rules(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<ProjectRuleList>> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&id)).await?;
    let rules = project_rules::list_for_project(&state.pool, project.team_id, project.id).await?;
    Ok(Json(ProjectRuleList {
        rules: rules.into_iter().map(Into::into).collect(),
    }))
}

/// Add a rule to a project (admin; audited). A pattern is unique in the team.
#[utoipa::path(post, path = "/v1/admin/projects/{id}/rules", tag = "admin", request_body = NewProjectRule,
    params(("id" = String, Path, description = "Project id or slug")),
    responses((status = 201, body = ProjectRuleResponse, description = "Added"),
              (status = 404, body = crate::error::ErrorBody, description = "No such project"),
              (status = 409, body = crate::error::ErrorBody, description = "`rule_taken`: the team maps this pattern already"),
              (status = 422, body = crate::error::ErrorBody, description = "`invalid_pattern`")),
    security(("bearer" = [])))]
pub async fn create_project_rule(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    Json(body): Json<NewProjectRule>,
) -> ApiResult<(StatusCode, Json<ProjectRuleResponse>)> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&id)).await?;
    let pattern = match body.kind {
        RuleKind::GitRemote => project_rules::normalize_remote(&body.pattern),
        RuleKind::PathPrefix => project_rules::normalize_path(&body.pattern),
    }
    .filter(|p| p.len() <= 1000)
    .ok_or_else(|| {
        ApiError::unprocessable(
            "invalid_pattern",
            "a git_remote rule takes a remote URL (`git@host:owner/repo.git`, `https://host/owner/repo`); \
             a path_prefix rule an absolute path",
        )
    })?;
    let mut tx = state.pool.begin().await?;
    let rule = project_rules::create(&mut *tx, project.team_id, project.id, body.kind, &pattern)
        .await
        .map_err(|e| {
            if is_unique_violation(&e, "project_rules_team_id_kind_pattern_key") {
                ApiError::conflict("rule_taken", "a rule of this team already maps this pattern")
            } else {
                e.into()
            }
        })?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id: project.team_id,
            project_id: Some(project.id),
            kind: "project_rule",
            id: rule.id,
        },
        "project_rule.create",
        serde_json::json!({"projectId": project.id, "kind": rule.kind, "pattern": rule.pattern}),
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(ProjectRuleResponse { rule: rule.into() }),
    ))
}

/// Delete a rule (admin; audited).
#[utoipa::path(delete, path = "/v1/admin/project-rules/{id}", tag = "admin",
    params(("id" = Uuid, Path, description = "Rule id")),
    responses((status = 200, body = ProjectRuleResponse, description = "Deleted"),
              (status = 404, body = crate::error::ErrorBody, description = "No such rule")),
    security(("bearer" = [])))]
pub async fn delete_project_rule(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<ProjectRuleResponse>> {
    auth.require(Scope::Admin)?;
    let not_found = || ApiError::not_found("rule_not_found", "no such rule");
    let mut tx = state.pool.begin().await?;
    let rule = project_rules::delete(&mut *tx, auth.team_id, id)
        .await?
        .ok_or_else(not_found)?;
    // A project-scoped admin may touch only its own project's rules.
    if !auth.can_see(rule.team_id, rule.project_id) {
        return Err(not_found());
    }
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id: rule.team_id,
            project_id: Some(rule.project_id),
            kind: "project_rule",
            id: rule.id,
        },
        "project_rule.delete",
        serde_json::json!({"projectId": rule.project_id, "kind": rule.kind, "pattern": rule.pattern}),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(ProjectRuleResponse { rule: rule.into() }))
}
