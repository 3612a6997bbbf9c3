//! Which project a request acts on. A project token names its own; a team
//! token names one in the request (id or slug). Anything the caller cannot see
//! answers 404, so ids of other tenants cannot be probed.

use cairn_shared::tenancy::{
    project_rules::{self, Locator},
    projects,
};
use uuid::Uuid;

use super::Auth;
use crate::{error::ApiError, state::AppState};

/// How a request's project was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// A project token's own project.
    Token,
    /// Named in the request.
    Explicit,
    /// A team rule on the git remote.
    GitRemote,
    /// A team rule on a path prefix.
    PathPrefix,
}

pub use cairn_core::tenancy::ProjectRef;

impl Auth {
    pub async fn project(&self, state: &AppState, requested: Option<&str>) -> Result<ProjectRef, ApiError> {
        let requested = requested.map(str::trim).filter(|s| !s.is_empty());
        let not_found = || ApiError::not_found("project_not_found", "no such project");
        let wanted = match (requested, self.project_id) {
            // A project token acting on its own project needs no lookup.
            (None, Some(own)) => {
                return Ok(ProjectRef {
                    team_id: self.team_id,
                    id: own,
                });
            }
            (Some(r), Some(own)) if Uuid::parse_str(r).is_ok_and(|r| r == own) => {
                return Ok(ProjectRef {
                    team_id: self.team_id,
                    id: own,
                });
            }
            (Some(r), _) => r,
            (None, None) => {
                return Err(ApiError::bad_request(
                    "project_required",
                    "a team token must name the project (projectId, or the `project` query parameter)",
                ));
            }
        };
        let project = match state.tokens.project(self.team_id, wanted) {
            Some(known) => known,
            None => {
                let found = projects::find_project(&state.pool, self.team_id, wanted)
                    .await?
                    .ok_or_else(not_found)?;
                let project = ProjectRef {
                    team_id: found.team_id,
                    id: found.id,
                };
                state.tokens.put_project(self.team_id, wanted, project);
                project
            }
        };
        match self.project_id {
            Some(own) if own != project.id => Err(not_found()),
            _ => Ok(project),
        }
    }

    /// Like [`Auth::project`], and for a team token that names no project,
    /// the team's rules applied to where the agent works. Unknown → 404
    /// `project_unresolved`, which the hook client spools.
    pub async fn project_at(
        &self,
        state: &AppState,
        requested: Option<&str>,
        at: &Locator,
    ) -> Result<(ProjectRef, MatchedBy), ApiError> {
        let requested = requested.map(str::trim).filter(|s| !s.is_empty());
        if requested.is_some() || self.project_id.is_some() {
            let matched = if requested.is_some() {
                MatchedBy::Explicit
            } else {
                MatchedBy::Token
            };
            return Ok((self.project(state, requested).await?, matched));
        }
        let rules = project_rules::list_for_team(&state.pool, self.team_id).await?;
        let rule = project_rules::best_match(&rules, at).ok_or_else(|| {
            ApiError::not_found(
                "project_unresolved",
                format!(
                    "no project rule of this team matches this directory (git remote {:?}, root {:?}, cwd {:?}); \
                     an admin adds one with POST /v1/admin/projects/{{id}}/rules, or set CAIRN_PROJECT",
                    at.git_remote.as_deref().unwrap_or("none"),
                    at.repo_root.as_deref().unwrap_or("none"),
                    at.cwd.as_deref().unwrap_or("none"),
                ),
            )
        })?;
        let matched = match rule.kind {
            project_rules::RuleKind::GitRemote => MatchedBy::GitRemote,
            project_rules::RuleKind::PathPrefix => MatchedBy::PathPrefix,
        };
        Ok((
            ProjectRef {
                team_id: rule.team_id,
                id: rule.project_id,
            },
            matched,
        ))
    }

    /// True when the caller may see rows of this project.
    pub fn can_see(&self, team_id: Uuid, project_id: Uuid) -> bool {
        team_id == self.team_id && self.project_id.is_none_or(|own| own == project_id)
    }

    /// Narrows list queries: the token's project, if it has one.
    pub fn project_filter(&self) -> Option<Uuid> {
        self.project_id
    }
}
