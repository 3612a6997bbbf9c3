//! LLM token usage and daily budgets (migration 0008): `llm_usage_daily`,
//! filled by a trigger whenever a job's usage is recorded, in up to sixteen
//! rows (shards) per project and day that readers sum (migration 0018), the
//! `llm_budget_today` view, and the budget columns of projects and teams.
//! Days are UTC days.

use chrono::NaiveDate;
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

pub use cairn_shared::budget::{State, Today};

pub async fn project_today(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
) -> sqlx::Result<Option<Today>> {
    sqlx::query_as(
        "SELECT project_budget, project_used, team_budget, team_used FROM llm_budget_today
         WHERE project_id = $2 AND team_id = $1",
    )
    .bind(team_id)
    .bind(project_id)
    .fetch_optional(db)
    .await
}

/// A team's budget and what all its projects used today.
pub async fn team_today(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<(Option<i64>, i64)> {
    sqlx::query_as(
        "SELECT t.llm_daily_token_budget,
                coalesce((SELECT sum(u.input_tokens + u.output_tokens) FROM llm_usage_daily u
                          WHERE u.team_id = t.id AND u.day = (now() AT TIME ZONE 'UTC')::date), 0)::bigint
         FROM teams t WHERE t.id = $1",
    )
    .bind(team_id)
    .fetch_optional(db)
    .await
    .map(|row| row.unwrap_or((None, 0)))
}

/// One UTC day of a project's model usage.
#[derive(Clone, Debug, FromRow)]
pub struct Day {
    pub day: NaiveDate,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub llm_calls: i64,
    pub heuristic_calls: i64,
}

/// The last `days` UTC days up to today, oldest first; days without usage are zeros.
pub async fn project_days(db: impl PgExecutor<'_>, project_id: Uuid, days: i32) -> sqlx::Result<Vec<Day>> {
    sqlx::query_as(
        "WITH today AS (SELECT (now() AT TIME ZONE 'UTC')::date AS d)
         SELECT g.day::date AS day,
                coalesce(u.input_tokens, 0) AS input_tokens, coalesce(u.output_tokens, 0) AS output_tokens,
                coalesce(u.llm_calls, 0) AS llm_calls, coalesce(u.heuristic_calls, 0) AS heuristic_calls
         FROM today, generate_series(today.d - ($2::int - 1), today.d, interval '1 day') AS g(day)
         LEFT JOIN (SELECT day, sum(input_tokens)::bigint AS input_tokens,
                           sum(output_tokens)::bigint AS output_tokens, sum(llm_calls)::bigint AS llm_calls,
                           sum(heuristic_calls)::bigint AS heuristic_calls
                    FROM llm_usage_daily
                    WHERE project_id = $1 AND day > (SELECT d FROM today) - $2::int
                    GROUP BY day) u ON u.day = g.day::date
         ORDER BY g.day",
    )
    .bind(project_id)
    .bind(days)
    .fetch_all(db)
    .await
}

/// Sets (or, with `None`, clears) a project's daily token budget; returns it.
pub async fn set_project_budget(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
    budget: Option<i64>,
) -> sqlx::Result<Option<Option<i64>>> {
    sqlx::query_scalar(
        "UPDATE projects SET llm_daily_token_budget = $3 WHERE team_id = $1 AND id = $2
         RETURNING llm_daily_token_budget",
    )
    .bind(team_id)
    .bind(project_id)
    .bind(budget)
    .fetch_optional(db)
    .await
}

/// Sets (or, with `None`, clears) a team's daily token budget; `None` when
/// there is no such team.
#[tracing::instrument(skip(db), err)]
pub async fn set_team_budget(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    budget: Option<i64>,
) -> sqlx::Result<Option<Option<i64>>> {
    sqlx::query_scalar(
        "UPDATE teams SET llm_daily_token_budget = $2 WHERE id = $1 RETURNING llm_daily_token_budget",
    )
    .bind(team_id)
    .bind(budget)
    .fetch_optional(db)
    .await
}

/// A project's daily token budget.
pub async fn project_budget(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
) -> sqlx::Result<Option<i64>> {
    sqlx::query_scalar("SELECT llm_daily_token_budget FROM projects WHERE team_id = $1 AND id = $2")
        .bind(team_id)
        .bind(project_id)
        .fetch_optional(db)
        .await
        .map(Option::flatten)
}

/// Counts one model call made by the API itself (an ask) against the
/// project's day, as the trigger counts a job's (in a random shard).
#[tracing::instrument(skip(db))]
pub async fn add_call(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
    input_tokens: i64,
    output_tokens: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO llm_usage_daily AS d (project_id, day, shard, team_id, input_tokens, output_tokens,
                                           llm_calls)
         VALUES ($2, (now() AT TIME ZONE 'UTC')::date, floor(random() * 16)::smallint, $1, $3, $4, 1)
         ON CONFLICT (project_id, day, shard) DO UPDATE SET
             input_tokens = d.input_tokens + EXCLUDED.input_tokens,
             output_tokens = d.output_tokens + EXCLUDED.output_tokens,
             llm_calls = d.llm_calls + 1, updated_at = now()",
    )
    .bind(team_id)
    .bind(project_id)
    .bind(input_tokens.max(0))
    .bind(output_tokens.max(0))
    .execute(db)
    .await
    .map(drop)
}

/// The budgets and usage today of a job's project, by job id.
#[tracing::instrument(skip(db), err)]
pub async fn job_today(db: impl PgExecutor<'_>, job_id: Uuid) -> sqlx::Result<Option<Today>> {
    sqlx::query_as(
        "SELECT b.project_budget, b.project_used, b.team_budget, b.team_used
         FROM generation_jobs j JOIN llm_budget_today b ON b.project_id = j.project_id
         WHERE j.id = $1",
    )
    .bind(job_id)
    .fetch_optional(db)
    .await
}
