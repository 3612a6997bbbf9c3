//! Daily LLM token budgets (migration 0008). [`guard`] wraps the configured
//! provider: before each call it reads the job's project and team budgets
//! and what both used today (UTC, view `llm_budget_today`, fed by a trigger
//! on the job's usage), and decides who answers:
//!
//! | state       | when (project or team, the worse)  | who answers                                     |
//! |-------------|------------------------------------|-------------------------------------------------|
//! | `ok`        | under 80 % (or no budget)          | the provider                                    |
//! | `degraded`  | 80 % up to 100 %                   | session summaries and turns with a failure: the provider; turn summaries and routine turns: the heuristic |
//! | `exhausted` | 100 % or more                      | the heuristic, always                           |
//!
//! A "routine" turn is an observation job whose events hold no failed tool
//! call (`PostToolUseFailure`) and no `error` field. The decision is written
//! on the job row (`budget_state`, `budget_detail`) whenever a budget
//! applies. The heuristic never fails, so a budget never loses a turn; if
//! the budget cannot be read the provider is called (fail open).

use std::sync::Arc;

use cairn_shared::jobs::JobType;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use crate::generation::material::Material;
use crate::generation::provider::{Completion, Provider, ProviderError, Request, heuristic::Heuristic};
use crate::store::{jobs, usage};

pub use cairn_shared::budget::{State, Today};

/// Who answers a job, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Provider,
    Heuristic(&'static str),
}

/// The rule of the module's table.
pub fn decide(state: State, material: &Material) -> Action {
    match (state, material.job_type) {
        (State::Ok, _) => Action::Provider,
        (State::Exhausted, _) => Action::Heuristic("daily token budget exhausted"),
        (State::Degraded, JobType::SessionSummary) => Action::Provider,
        (State::Degraded, JobType::TurnSummary) => {
            Action::Heuristic("over 80% of the daily token budget: turn summaries use the heuristic")
        }
        (State::Degraded, JobType::Observations) if had_failure(material) => Action::Provider,
        (State::Degraded, JobType::Observations) => {
            Action::Heuristic("over 80% of the daily token budget: routine turns use the heuristic")
        }
    }
}

/// A failed tool call or an error in the job's events: worth a model's reading.
fn had_failure(material: &Material) -> bool {
    material
        .events
        .iter()
        .any(|e| e.event_type == "PostToolUseFailure" || e.payload.get("error").is_some_and(|v| !v.is_null()))
}

/// The configured provider behind the budget check.
pub fn guard(inner: Arc<dyn Provider>, pool: PgPool) -> Arc<dyn Provider> {
    if inner.name() == "heuristic" {
        return inner;
    }
    Arc::new(Budgeted { inner, pool })
}

struct Budgeted {
    inner: Arc<dyn Provider>,
    pool: PgPool,
}

/// Writes the decision on the job row while the job is still being worked.
async fn record(
    pool: &PgPool,
    job_id: Uuid,
    today: &Today,
    state: State,
    action: Action,
) -> sqlx::Result<()> {
    let detail = json!({
        "action": match action { Action::Provider => "provider", Action::Heuristic(_) => "heuristic" },
        "reason": match action { Action::Provider => None, Action::Heuristic(why) => Some(why) },
        "projectBudget": today.project_budget,
        "projectUsed": today.project_used,
        "teamBudget": today.team_budget,
        "teamUsed": today.team_used,
    });
    jobs::record_budget(pool, job_id, state.as_str(), detail).await
}

impl Budgeted {
    async fn action(&self, material: &Material) -> Action {
        let today = match usage::job_today(&self.pool, material.job_id).await {
            Ok(Some(today)) if today.applies() => today,
            Ok(_) => return Action::Provider,
            Err(e) => {
                tracing::warn!(job_id = %material.job_id, error = %e, "token budget unreadable; calling the provider");
                return Action::Provider;
            }
        };
        let state = today.state();
        let action = decide(state, material);
        if let Err(e) = record(&self.pool, material.job_id, &today, state, action).await {
            tracing::warn!(job_id = %material.job_id, error = %e, "budget decision not recorded");
        }
        if let Action::Heuristic(why) = action {
            tracing::info!(job_id = %material.job_id, state = state.as_str(), why, "token budget: heuristic answers");
        }
        action
    }
}

#[async_trait::async_trait]
impl Provider for Budgeted {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    async fn complete(&self, request: Request<'_>) -> Result<Completion, ProviderError> {
        match self.action(request.material).await {
            Action::Provider => self.inner.complete(request).await,
            Action::Heuristic(_) => Heuristic.complete(request).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use cairn_shared::jobs::JobType;
    use serde_json::json;
    use uuid::Uuid;

    use super::{Action, State, decide};
    use crate::generation::material::{EventRecord, Material};

    fn material(job_type: JobType, events: &[(&str, serde_json::Value)]) -> Material {
        Material {
            job_id: Uuid::nil(),
            job_type,
            project: "p".into(),
            agent: None,
            cwd: None,
            prompt_number: Some(1),
            events: events
                .iter()
                .map(|(event_type, payload)| EventRecord {
                    event_type: event_type.to_string(),
                    tool_name: Some("Bash".into()),
                    prompt_number: Some(1),
                    payload: payload.clone(),
                    occurred_at: chrono::Utc::now(),
                })
                .collect(),
        }
    }

    #[test]
    fn degraded_keeps_the_model_for_failures_and_session_summaries_only() {
        let routine = material(
            JobType::Observations,
            &[("PostToolUse", json!({"tool_response": "ok"}))],
        );
        let failed = material(
            JobType::Observations,
            &[("PostToolUseFailure", json!({"error": "boom"}))],
        );
        let errored = material(
            JobType::Observations,
            &[("PostToolUse", json!({"error": "boom"}))],
        );
        let turn = material(JobType::TurnSummary, &[("PostToolUseFailure", json!({}))]);
        let session = material(JobType::SessionSummary, &[]);
        assert!(matches!(decide(State::Degraded, &routine), Action::Heuristic(_)));
        assert_eq!(decide(State::Degraded, &failed), Action::Provider);
        assert_eq!(decide(State::Degraded, &errored), Action::Provider);
        assert!(matches!(decide(State::Degraded, &turn), Action::Heuristic(_)));
        assert_eq!(decide(State::Degraded, &session), Action::Provider);
        for m in [&routine, &failed, &turn, &session] {
            assert_eq!(decide(State::Ok, m), Action::Provider);
            assert!(matches!(decide(State::Exhausted, m), Action::Heuristic(_)));
        }
    }
}
