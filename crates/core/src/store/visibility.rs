//! Who sees a memory in a `private-first` project (migration 0027):
//! promoting one to the team (its author, a reviewer, or the project's
//! rule), taking it back, a reviewer's rejection (it stays private and the
//! rule never promotes it), and the review queue. Observations and
//! summaries alike; every change is the caller's to audit.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, prelude::FromRow};
use uuid::Uuid;

/// A memory whose visibility changed, or that waits for review.
#[derive(Clone, Debug, FromRow, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shared {
    pub id: Uuid,
    pub project_id: Uuid,
    /// `observation` or `summary`.
    pub source: String,
    pub member_id: Option<Uuid>,
    pub title: String,
    pub visibility: String,
    pub created_at: DateTime<Utc>,
}

/// Where the memory may be: the caller's team, and its project for a project token.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
}

/// What a change may touch: a member's own memories only, or any (a reviewer).
#[derive(Clone, Copy, Debug)]
pub enum Whose {
    Own(Uuid),
    Any,
}

impl Whose {
    fn owner(self) -> Option<Uuid> {
        match self {
            Whose::Own(member) => Some(member),
            Whose::Any => None,
        }
    }
}

/// Sets memory `id` of the project to `to` (`team` or `private`) when it is
/// in `from`, by `by`; a promotion clears a rejection. `None` when there is
/// no such memory the caller may change in that state.
#[tracing::instrument(skip(conn))]
pub async fn set(
    conn: &mut PgConnection,
    scope: Scope,
    id: Uuid,
    from: &str,
    to: &str,
    whose: Whose,
    by: &str,
) -> sqlx::Result<Option<Shared>> {
    let observation: Option<Shared> = sqlx::query_as(
        "UPDATE observations SET visibility = $4,
             promoted_at = CASE WHEN $4 = 'team' THEN now() END,
             promoted_by = CASE WHEN $4 = 'team' THEN $6 END,
             rejected_at = CASE WHEN $4 = 'team' THEN NULL ELSE rejected_at END
         WHERE team_id = $1 AND ($7::uuid IS NULL OR project_id = $7) AND id = $2 AND visibility = $3
           AND member_id IS NOT NULL
           AND ($5::uuid IS NULL OR member_id = $5)
         RETURNING id, project_id, 'observation' AS source, member_id, title, visibility, created_at",
    )
    .bind(scope.team_id)
    .bind(id)
    .bind(from)
    .bind(to)
    .bind(whose.owner())
    .bind(by)
    .bind(scope.project_id)
    .fetch_optional(&mut *conn)
    .await?;
    if observation.is_some() {
        return Ok(observation);
    }
    sqlx::query_as(
        "UPDATE summaries SET visibility = $4
         WHERE team_id = $1 AND ($6::uuid IS NULL OR project_id = $6) AND id = $2 AND visibility = $3
           AND member_id IS NOT NULL
           AND ($5::uuid IS NULL OR member_id = $5)
         RETURNING id, project_id, 'summary' AS source, member_id, request AS title, visibility, created_at",
    )
    .bind(scope.team_id)
    .bind(id)
    .bind(from)
    .bind(to)
    .bind(whose.owner())
    .bind(scope.project_id)
    .fetch_optional(conn)
    .await
}

/// A reviewer rejects a private observation: it stays private, and the
/// project's rule will not promote it.
#[tracing::instrument(skip(conn))]
pub async fn reject(conn: &mut PgConnection, scope: Scope, id: Uuid) -> sqlx::Result<Option<Shared>> {
    sqlx::query_as(
        "UPDATE observations SET rejected_at = now()
         WHERE team_id = $1 AND ($3::uuid IS NULL OR project_id = $3) AND id = $2 AND visibility = 'private'
         RETURNING id, project_id, 'observation' AS source, member_id, title, visibility, created_at",
    )
    .bind(scope.team_id)
    .bind(id)
    .bind(scope.project_id)
    .fetch_optional(conn)
    .await
}

/// The review queue: private observations nobody rejected, oldest first.
#[tracing::instrument(skip(pool))]
pub async fn pending(pool: &PgPool, project_id: Uuid, limit: i64) -> sqlx::Result<Vec<Shared>> {
    sqlx::query_as(
        "SELECT id, project_id, 'observation' AS source, member_id, title, visibility, created_at FROM observations
         WHERE project_id = $1 AND visibility = 'private' AND rejected_at IS NULL
           AND state IN ('live', 'stale')
         ORDER BY created_at, id LIMIT $2",
    )
    .bind(project_id)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// The projects' rule "no objection within N days": private memories
/// older than that and not rejected become the team's. Returns how many.
#[tracing::instrument(skip(pool))]
pub async fn promote_unopposed(pool: &PgPool) -> sqlx::Result<u64> {
    let observations = sqlx::query(
        "UPDATE observations o SET visibility = 'team', promoted_at = now(),
             promoted_by = 'rule: no objection within ' || p.promote_after_days || ' days'
         FROM projects p
         WHERE p.id = o.project_id AND p.memory_visibility = 'private-first' AND p.promote_after_days IS NOT NULL
           AND o.visibility = 'private' AND o.rejected_at IS NULL
           AND o.created_at < now() - p.promote_after_days * interval '1 day'",
    )
    .execute(pool)
    .await?
    .rows_affected();
    let summaries = sqlx::query(
        "UPDATE summaries s SET visibility = 'team'
         FROM projects p
         WHERE p.id = s.project_id AND p.memory_visibility = 'private-first' AND p.promote_after_days IS NOT NULL
           AND s.visibility = 'private' AND s.created_at < now() - p.promote_after_days * interval '1 day'",
    )
    .execute(pool)
    .await?
    .rows_affected();
    Ok(observations + summaries)
}
