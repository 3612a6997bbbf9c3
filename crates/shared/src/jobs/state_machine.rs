//! The job state machine (docs/state-machine.md). Every status change of a
//! generation job goes through `apply`: one conditional UPDATE on the expected
//! current status (and, leaving `processing`, on the lock owner), which also
//! appends the transition to `generation_job_events`. A transition that
//! matches no row is a `Refused` error carrying the status actually found.

use sqlx::PgExecutor;
use uuid::Uuid;

use super::JobStatus;

/// A change of status, with what it needs.
#[derive(Clone, Debug)]
pub enum Transition<'a> {
    /// queued → cancelled, processing → cancelled (operator).
    Cancel { actor: &'a str },
    /// failed | cancelled → queued (operator, audited by the caller).
    OperatorRetry { actor: &'a str },
}

impl Transition<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Transition::Cancel { .. } => "cancel",
            Transition::OperatorRetry { .. } => "operator_retry",
        }
    }

    /// The states this transition may leave.
    pub fn from(&self) -> &'static [JobStatus] {
        match self {
            Transition::Cancel { .. } => &[JobStatus::Queued, JobStatus::Processing],
            Transition::OperatorRetry { .. } => &[JobStatus::Failed, JobStatus::Cancelled],
        }
    }

    pub fn to(&self) -> JobStatus {
        match self {
            Transition::Cancel { .. } => JobStatus::Cancelled,
            Transition::OperatorRetry { .. } => JobStatus::Queued,
        }
    }

    fn actor(&self) -> &str {
        match self {
            Transition::Cancel { actor } | Transition::OperatorRetry { actor } => actor,
        }
    }

    /// The SET clause; `$3` is bound to the actor.
    fn set_clause(&self) -> &'static str {
        match self {
            Transition::Cancel { .. } => {
                "status = 'cancelled', cancelled_at = now(), locked_by = NULL, lease_expires_at = NULL"
            }
            Transition::OperatorRetry { .. } => {
                "status = 'queued', attempts = 0, retried_count = j.retried_count + 1, next_attempt_at = now(),
                 failed_at = NULL, cancelled_at = NULL, locked_by = NULL, lease_expires_at = NULL"
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TransitionError {
    #[error("job {job_id}: `{transition}` refused in state {found:?}")]
    Refused {
        job_id: Uuid,
        transition: &'static str,
        found: Option<JobStatus>,
    },
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Applies one transition to one job of the project and returns the new status.
pub async fn apply(
    db: impl PgExecutor<'_> + Copy,
    project_id: Uuid,
    job_id: Uuid,
    transition: Transition<'_>,
) -> Result<JobStatus, TransitionError> {
    let from: Vec<&str> = transition.from().iter().map(|s| s.as_str()).collect();
    let sql = format!(
        "WITH moved AS (
             UPDATE generation_jobs j SET {set}, updated_at = now()
             FROM (SELECT id, status AS from_status FROM generation_jobs
                   WHERE id = $1 AND project_id = $2 AND status = ANY($4) FOR UPDATE) prev
             WHERE j.id = prev.id
             RETURNING j.id, j.team_id, j.project_id, prev.from_status, j.status
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor)
             SELECT id, team_id, project_id, from_status, status, $3 FROM moved
         )
         SELECT status FROM moved",
        set = transition.set_clause()
    );
    let moved: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(job_id)
        .bind(project_id)
        .bind(transition.actor())
        .bind(&from)
        .fetch_optional(db)
        .await?;
    match moved {
        Some(status) => Ok(JobStatus::parse(&status).unwrap_or(transition.to())),
        None => {
            let found: Option<String> =
                sqlx::query_scalar("SELECT status FROM generation_jobs WHERE id = $1 AND project_id = $2")
                    .bind(job_id)
                    .bind(project_id)
                    .fetch_optional(db)
                    .await?;
            Err(TransitionError::Refused {
                job_id,
                transition: transition.name(),
                found: found.as_deref().and_then(JobStatus::parse),
            })
        }
    }
}
