//! `GET /v1/projects/{projectId}/usage`: a project's model tokens per UTC
//! day, and the daily budget state `/v1/info` reports.

use axum::extract::State;
use cairn_shared::auth::Scope;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::usage,
};

#[derive(Deserialize, IntoParams)]
pub struct UsageQuery {
    /// How many UTC days, ending today: 1..=90 (default 7).
    pub days: Option<i32>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageDay {
    /// The UTC day.
    pub day: NaiveDate,
    /// Model input tokens (cached ones included); the heuristic's are not counted.
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Input plus output: what the daily budget counts.
    pub total_tokens: i64,
    /// Attempts a model answered.
    pub llm_calls: i64,
    /// Jobs the offline heuristic answered (no tokens spent).
    pub heuristic_calls: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectUsage {
    pub project_id: Uuid,
    /// Tokens per UTC day; null: unlimited.
    pub daily_token_budget: Option<i64>,
    /// Oldest first, today last; days without usage are zeros.
    pub days: Vec<UsageDay>,
}

/// A project's model token usage per UTC day (read).
#[utoipa::path(get, path = "/v1/projects/{projectId}/usage", tag = "projects",
    params(("projectId" = String, Path, description = "Project id or slug"), UsageQuery),
    responses((status = 200, body = ProjectUsage), (status = 404, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_project_usage(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
    Query(q): Query<UsageQuery>,
) -> ApiResult<Json<ProjectUsage>> {
    auth.require(Scope::Read)?;
    let days = q.days.unwrap_or(7);
    if !(1..=90).contains(&days) {
        return Err(ApiError::unprocessable("invalid_field", "`days` is 1..=90"));
    }
    let project = auth.project(&state, Some(&project_id)).await?;
    let budget = usage::project_budget(&state.pool, project.team_id, project.id).await?;
    // The chart's days may lag (the read replica); the budget is the primary's.
    let rows = usage::project_days(&state.read_pool, project.id, days).await?;
    Ok(Json(ProjectUsage {
        project_id: project.id,
        daily_token_budget: budget,
        days: rows
            .into_iter()
            .map(|d| UsageDay {
                day: d.day,
                input_tokens: d.input_tokens,
                output_tokens: d.output_tokens,
                total_tokens: d.input_tokens.saturating_add(d.output_tokens),
                llm_calls: d.llm_calls,
                heuristic_calls: d.heuristic_calls,
            })
            .collect(),
    }))
}

/// One budget (a project's or a team's) and what it used today.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetLine {
    /// Tokens per UTC day; null: unlimited.
    pub daily_token_budget: Option<i64>,
    /// Model tokens (input plus output) used since 00:00 UTC.
    pub tokens_used_today: i64,
    /// `ok` (under 80 %, or no budget), `degraded` (80 % up to 100 %) or `exhausted`.
    pub state: &'static str,
}

impl BudgetLine {
    fn new(budget: Option<i64>, used: i64) -> Self {
        Self {
            daily_token_budget: budget,
            tokens_used_today: used,
            state: usage::State::of(used, budget).as_str(),
        }
    }
}

/// The caller's daily LLM token budget, as `/v1/info` reports it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LlmBudget {
    /// What the generator does now: the worse of the project's and the team's state.
    pub state: &'static str,
    /// The caller's project (project tokens; absent for a team token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<BudgetLine>,
    pub team: BudgetLine,
    /// When today's usage starts again from zero (next 00:00 UTC).
    pub resets_at: DateTime<Utc>,
}

/// The budget of the caller's project (and team), or of its team alone.
pub async fn llm_budget(state: &AppState, team_id: Uuid, project_id: Option<Uuid>) -> ApiResult<LlmBudget> {
    let today = match project_id {
        Some(project_id) => usage::project_today(&state.pool, team_id, project_id).await?,
        None => None,
    };
    let (overall, project, team) = match today {
        Some(today) => (
            today.state(),
            Some(BudgetLine::new(today.project_budget, today.project_used)),
            BudgetLine::new(today.team_budget, today.team_used),
        ),
        None => {
            let (budget, used) = usage::team_today(&state.pool, team_id).await?;
            (
                usage::State::of(used, budget),
                None,
                BudgetLine::new(budget, used),
            )
        }
    };
    let tomorrow = Utc::now().date_naive().succ_opt().unwrap_or(NaiveDate::MAX);
    Ok(LlmBudget {
        state: overall.as_str(),
        project,
        team,
        resets_at: tomorrow.and_time(chrono::NaiveTime::MIN).and_utc(),
    })
}
