//! The job state machine (docs/state-machine.md). Every status change of a
//! generation job goes through this module: one conditional UPDATE on the
//! expected current status (and, leaving `processing`, on the lock owner),
//! which appends the transition to `generation_job_events` in the same
//! statement. A transition on one job that matches no row is a `Refused`
//! error carrying the status actually found.
//!
//! Set-wise transitions (`claim`, `rescue_expired`) act on whichever rows
//! qualify and return them; `heartbeat` extends a lease without changing a
//! status, so it logs nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::{PgConnection, PgExecutor, prelude::FromRow};
use uuid::Uuid;

use super::{JobStatus, JobType};

/// A change of status of one job, with what it needs.
#[derive(Clone, Debug)]
pub enum Transition<'a> {
    /// processing → completed, by the lock owner; in the transaction that writes the job's rows.
    Complete {
        worker: &'a str,
        usage: Option<&'a Value>,
    },
    /// processing → queued, by the lock owner, due again at `at`.
    RetryLater {
        worker: &'a str,
        at: DateTime<Utc>,
        error: &'a str,
        usage: Option<&'a Value>,
    },
    /// processing → failed, by the lock owner (not retryable, or attempts used up).
    Fail {
        worker: &'a str,
        error: &'a str,
        usage: Option<&'a Value>,
    },
    /// processing → queued, by the lock owner shutting down; the attempt is not counted.
    Release { worker: &'a str },
    /// queued → cancelled, processing → cancelled (operator; overrides the lease).
    Cancel { actor: &'a str },
    /// failed | cancelled → queued (operator, audited by the caller).
    OperatorRetry { actor: &'a str },
}

impl Transition<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Transition::Complete { .. } => "complete",
            Transition::RetryLater { .. } => "retry_later",
            Transition::Fail { .. } => "fail",
            Transition::Release { .. } => "release",
            Transition::Cancel { .. } => "cancel",
            Transition::OperatorRetry { .. } => "operator_retry",
        }
    }

    /// The states this transition may leave.
    pub fn from(&self) -> &'static [JobStatus] {
        match self {
            Transition::Complete { .. }
            | Transition::RetryLater { .. }
            | Transition::Fail { .. }
            | Transition::Release { .. } => &[JobStatus::Processing],
            Transition::Cancel { .. } => &[JobStatus::Queued, JobStatus::Processing],
            Transition::OperatorRetry { .. } => &[JobStatus::Failed, JobStatus::Cancelled],
        }
    }

    pub fn to(&self) -> JobStatus {
        match self {
            Transition::Complete { .. } => JobStatus::Completed,
            Transition::RetryLater { .. } | Transition::Release { .. } | Transition::OperatorRetry { .. } => {
                JobStatus::Queued
            }
            Transition::Fail { .. } => JobStatus::Failed,
            Transition::Cancel { .. } => JobStatus::Cancelled,
        }
    }

    fn actor(&self) -> &str {
        match self {
            Transition::Complete { worker, .. }
            | Transition::RetryLater { worker, .. }
            | Transition::Fail { worker, .. }
            | Transition::Release { worker } => worker,
            Transition::Cancel { actor } | Transition::OperatorRetry { actor } => actor,
        }
    }

    /// Leaving `processing` on the worker's behalf requires holding the lock.
    fn lock_owner(&self) -> Option<&str> {
        match self {
            Transition::Complete { worker, .. }
            | Transition::RetryLater { worker, .. }
            | Transition::Fail { worker, .. }
            | Transition::Release { worker } => Some(worker),
            Transition::Cancel { .. } | Transition::OperatorRetry { .. } => None,
        }
    }

    fn next_attempt_at(&self) -> Option<DateTime<Utc>> {
        match self {
            Transition::RetryLater { at, .. } => Some(*at),
            _ => None,
        }
    }

    fn error(&self) -> Option<&str> {
        match self {
            Transition::RetryLater { error, .. } | Transition::Fail { error, .. } => Some(error),
            _ => None,
        }
    }

    fn usage(&self) -> Option<&Value> {
        match self {
            Transition::Complete { usage, .. }
            | Transition::RetryLater { usage, .. }
            | Transition::Fail { usage, .. } => *usage,
            _ => None,
        }
    }

    /// What the job's event log keeps beside from/to.
    fn detail(&self) -> Value {
        match self {
            Transition::RetryLater { at, error, .. } => json!({ "next_attempt_at": at, "error": error }),
            Transition::Fail { error, .. } => json!({ "error": error }),
            Transition::Release { .. } => json!({ "reason": "worker shutting down" }),
            _ => json!({}),
        }
    }

    /// The SET clause. Binds: `$5` next_attempt_at, `$6` last_error, `$7` usage.
    fn set_clause(&self) -> &'static str {
        match self {
            Transition::Complete { .. } => {
                "status = 'completed', completed_at = now(), last_error = NULL,
                 locked_by = NULL, lease_expires_at = NULL, usage = coalesce($7, j.usage)"
            }
            Transition::RetryLater { .. } => {
                "status = 'queued', next_attempt_at = $5, last_error = $6,
                 locked_by = NULL, lease_expires_at = NULL, usage = coalesce($7, j.usage)"
            }
            Transition::Fail { .. } => {
                "status = 'failed', failed_at = now(), last_error = $6,
                 locked_by = NULL, lease_expires_at = NULL, usage = coalesce($7, j.usage)"
            }
            Transition::Release { .. } => {
                "status = 'queued', attempts = greatest(j.attempts - 1, 0), next_attempt_at = now(),
                 locked_by = NULL, lease_expires_at = NULL"
            }
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
    conn: &mut PgConnection,
    project_id: Uuid,
    job_id: Uuid,
    transition: Transition<'_>,
) -> Result<JobStatus, TransitionError> {
    apply_with(conn, project_id, job_id, transition, Writes::default()).await
}

/// What a transition writes in its own statement: the rows a completed job
/// leaves, say. `ctes` follow the transition's `moved` (the job's row as
/// moved: `id`, `team_id`, `project_id`, `session_id`, `prompt_number`,
/// `from_status`, `status`) and `logged` CTEs, each beginning with a comma
/// and reading `FROM moved`, so that a refused transition writes nothing.
/// `params` are bound as jsonb from `$10` on.
#[derive(Debug, Default)]
pub struct Writes {
    pub ctes: String,
    pub params: Vec<Value>,
}

/// [`apply`] and `writes` in one statement, so in one round trip and one
/// transaction: the job is refused before anything is written, and nothing
/// is written unless the job moved.
#[tracing::instrument(skip_all, fields(%job_id, transition = transition.name()))]
pub async fn apply_with(
    conn: &mut PgConnection,
    project_id: Uuid,
    job_id: Uuid,
    transition: Transition<'_>,
    writes: Writes,
) -> Result<JobStatus, TransitionError> {
    let from: Vec<&str> = transition.from().iter().map(|s| s.as_str()).collect();
    let sql = statement(&transition, &writes.ctes);
    let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(job_id)
        .bind(project_id)
        .bind(transition.actor())
        .bind(&from)
        .bind(transition.next_attempt_at())
        .bind(transition.error())
        .bind(transition.usage())
        .bind(transition.lock_owner())
        .bind(transition.detail());
    for param in writes.params {
        query = query.bind(param);
    }
    let moved: Option<JobStatus> = query.fetch_optional(&mut *conn).await?;
    match moved {
        Some(status) => {
            count_transition(&from.join("|"), transition.to().as_str(), transition.name(), 1);
            Ok(status)
        }
        None => {
            let found: Option<JobStatus> =
                sqlx::query_scalar("SELECT status FROM generation_jobs WHERE id = $1 AND project_id = $2")
                    .bind(job_id)
                    .bind(project_id)
                    .fetch_optional(&mut *conn)
                    .await?;
            Err(TransitionError::Refused {
                job_id,
                transition: transition.name(),
                found,
            })
        }
    }
}

/// The statement [`apply_with`] runs for `transition` and `writes`' CTEs.
pub fn statement(transition: &Transition<'_>, writes: &str) -> String {
    format!(
        "WITH moved AS (
             UPDATE generation_jobs j SET {set}, updated_at = now()
             FROM (SELECT id, status AS from_status FROM generation_jobs
                   WHERE id = $1 AND project_id = $2 AND status = ANY($4)
                     AND ($8::text IS NULL OR locked_by = $8) FOR UPDATE) prev
             WHERE j.id = prev.id
             RETURNING j.id, j.team_id, j.project_id, j.session_id, j.prompt_number, prev.from_status, j.status
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
             SELECT id, team_id, project_id, from_status, status, $3, $9 FROM moved
         ){writes}
         SELECT status FROM moved",
        set = transition.set_clause(),
    )
}

/// A job a worker now holds.
#[derive(Clone, Debug, FromRow)]
pub struct ClaimedJob {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub job_type: JobType,
    pub prompt_number: Option<i32>,
    /// Counting this one.
    pub attempts: i32,
    pub max_attempts: i32,
    pub lease_expires_at: DateTime<Utc>,
    /// The W3C trace context of the request that created the job, if traced.
    pub traceparent: Option<String>,
}

/// Which queued jobs a claim may take.
#[derive(Clone, Copy, Debug)]
pub enum ClaimTarget {
    /// The job a wake-up named, if it is still queued and due.
    Job(Uuid),
    /// Up to this many due jobs, oldest first.
    AnyDue(i64),
    /// Up to this many due jobs of one project, oldest first (inline
    /// generation in an embedding program).
    ProjectDue(Uuid, i64),
}

/// The claim statement (`claim` binds `$1` worker, `$2` lease, `$3` only
/// this job, `$4` limit, `$5` only this project); bench/pgbench_claim_complete.sql
/// runs the same statement, checked by a test below.
const CLAIM_SQL: &str = "WITH next AS (
             SELECT g.id FROM generation_jobs g
             WHERE g.status = 'queued' AND g.next_attempt_at <= now() AND g.attempts < g.max_attempts
               AND ($3::uuid IS NULL OR g.id = $3) AND ($5::uuid IS NULL OR g.project_id = $5)
               AND NOT (g.job_type = 'turn_summary' AND EXISTS (
                   SELECT 1 FROM generation_jobs o
                   WHERE o.session_id = g.session_id AND o.prompt_number = g.prompt_number
                     AND o.job_type = 'observations' AND o.status = 'queued'
                     AND o.next_attempt_at <= now() AND o.attempts < o.max_attempts))
               AND NOT (g.job_type = 'session_summary' AND EXISTS (
                   SELECT 1 FROM generation_jobs t
                   WHERE t.session_id = g.session_id AND t.job_type IN ('observations', 'turn_summary')
                     AND t.status = 'queued' AND t.next_attempt_at <= now() AND t.attempts < t.max_attempts))
             ORDER BY g.next_attempt_at, g.id
             LIMIT $4 FOR UPDATE OF g SKIP LOCKED
         ), moved AS (
             UPDATE generation_jobs j SET status = 'processing', attempts = j.attempts + 1, sealed = true,
                 locked_by = $1, lease_expires_at = now() + $2, started_at = coalesce(j.started_at, now()),
                 updated_at = now()
             FROM next WHERE j.id = next.id
             RETURNING j.id, j.team_id, j.project_id, j.session_id, j.job_type, j.prompt_number, j.attempts,
                 j.max_attempts, j.lease_expires_at, j.traceparent
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
             SELECT id, team_id, project_id, 'queued', 'processing', $1, jsonb_build_object('attempt', attempts)
             FROM moved
         )
         SELECT * FROM moved";

/// queued → processing: takes due jobs no other worker holds (`FOR UPDATE
/// SKIP LOCKED`), counts the attempt, seals the job against more events and
/// leases it to `worker`. Commits at once; no transaction stays open while
/// the provider works.
///
/// A turn's summary is not taken while an observation job of its turn is
/// due and unclaimed: that job, once it starts, writes the summary too (one
/// call for the turn, with the turn's Stop in its material). Without this a
/// worker woken for the summary first would write it alone, and the
/// observations would miss the agent's last message.
///
/// Likewise a session's summary is not taken while a job of one of its
/// turns is due and unclaimed: it is made from the turn summaries, and a
/// worker holding it would otherwise wait out its grace with the turn's
/// job still queued behind it (one worker), then summarise without it.
pub async fn claim(
    db: impl PgExecutor<'_>,
    worker: &str,
    lease: Duration,
    target: ClaimTarget,
) -> sqlx::Result<Vec<ClaimedJob>> {
    let (only, limit, project) = match target {
        ClaimTarget::Job(id) => (Some(id), 1, None),
        ClaimTarget::AnyDue(n) => (None, n, None),
        ClaimTarget::ProjectDue(project, n) => (None, n, Some(project)),
    };
    sqlx::query_as(CLAIM_SQL)
        .bind(worker)
        .bind(lease)
        .bind(only)
        .bind(limit)
        .bind(project)
        .fetch_all(db)
        .await
        .inspect(|claimed: &Vec<ClaimedJob>| {
            count_transition("queued", "processing", "claim", claimed.len() as u64)
        })
}

/// Extends the lease of a job `worker` still holds. False when the lease is
/// lost (rescued, cancelled): the worker must drop the job without writing.
pub async fn heartbeat(
    db: impl PgExecutor<'_>,
    job_id: Uuid,
    worker: &str,
    lease: Duration,
) -> sqlx::Result<bool> {
    let result = sqlx::query(
        "UPDATE generation_jobs SET lease_expires_at = now() + $3, updated_at = now()
         WHERE id = $1 AND status = 'processing' AND locked_by = $2",
    )
    .bind(job_id)
    .bind(worker)
    .bind(lease)
    .execute(db)
    .await?;
    Ok(result.rows_affected() == 1)
}

/// A job whose expired lease was taken back.
#[derive(Clone, Debug, FromRow)]
pub struct RescuedJob {
    pub id: Uuid,
    pub project_id: Uuid,
    pub status: JobStatus,
    pub previous_owner: String,
}

/// processing → queued (due after `delay`), or → failed when its attempts
/// are used up, for jobs whose lease expired: their worker died or hung.
pub async fn rescue_expired(
    db: impl PgExecutor<'_>,
    actor: &str,
    delay: Duration,
    limit: i64,
) -> sqlx::Result<Vec<RescuedJob>> {
    sqlx::query_as(
        "WITH expired AS (
             SELECT id, locked_by AS previous_owner FROM generation_jobs
             WHERE status = 'processing' AND lease_expires_at < now()
             ORDER BY lease_expires_at LIMIT $3 FOR UPDATE SKIP LOCKED
         ), moved AS (
             UPDATE generation_jobs j SET
                 status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END,
                 failed_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
                 next_attempt_at = now() + $2,
                 last_error = 'lease expired: worker ' || expired.previous_owner || ' stopped heartbeating',
                 locked_by = NULL, lease_expires_at = NULL, updated_at = now()
             FROM expired WHERE j.id = expired.id
             RETURNING j.id, j.team_id, j.project_id, j.status, expired.previous_owner
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
             SELECT id, team_id, project_id, 'processing', status, $1,
                    jsonb_build_object('reason', 'lease expired', 'previous_owner', previous_owner)
             FROM moved
         )
         SELECT id, project_id, status, previous_owner FROM moved",
    )
    .bind(actor)
    .bind(delay)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// queued → failed, for queued jobs that can never be claimed because their
/// attempts are used up (an operator lowered `max_attempts`, say): they fail
/// visibly instead of waiting forever.
pub async fn fail_exhausted(db: impl PgExecutor<'_>, actor: &str, limit: i64) -> sqlx::Result<Vec<Uuid>> {
    sqlx::query_scalar(
        "WITH stuck AS (
             SELECT id FROM generation_jobs
             WHERE status = 'queued' AND attempts >= max_attempts
             LIMIT $2 FOR UPDATE SKIP LOCKED
         ), moved AS (
             UPDATE generation_jobs j SET status = 'failed', failed_at = now(), updated_at = now(),
                 last_error = coalesce(j.last_error || '; ', '') || 'attempts exhausted while queued'
             FROM stuck WHERE j.id = stuck.id
             RETURNING j.id, j.team_id, j.project_id
         ), logged AS (
             INSERT INTO generation_job_events (job_id, team_id, project_id, from_status, to_status, actor, detail)
             SELECT id, team_id, project_id, 'queued', 'failed', $1, '{\"reason\": \"attempts exhausted\"}'::jsonb
             FROM moved
         )
         SELECT id FROM moved",
    )
    .bind(actor)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Keeps the W3C `traceparent` of the request that created a job (the first one wins).
#[tracing::instrument(skip(conn))]
pub async fn set_traceparent(conn: &mut PgConnection, job_id: Uuid, traceparent: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE generation_jobs SET traceparent = $2 WHERE id = $1 AND traceparent IS NULL")
        .bind(job_id)
        .bind(traceparent)
        .execute(conn)
        .await?;
    Ok(())
}

/// `cairn_job_transitions_total` (see `cairn_telemetry::names::JOB_TRANSITIONS`).
fn count_transition(from: &str, to: &'static str, transition: &'static str, n: u64) {
    if n > 0 {
        metrics::counter!("cairn_job_transitions_total",
            "from" => from.to_owned(), "to" => to, "transition" => transition)
        .increment(n);
    }
}

#[cfg(test)]
mod tests {
    /// bench/pgbench_claim_complete.sql claims with this module's statement,
    /// the generator's values written in for the parameters.
    #[test]
    fn the_pgbench_copy_of_the_claim_is_current() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/pgbench_claim_complete.sql");
        let bench = std::fs::read_to_string(&path).unwrap();
        let copy = bench
            .split_once("\nWITH next AS (")
            .and_then(|(_, rest)| rest.split_once(" \\gset"))
            .map(|(claim, _)| format!("WITH next AS ({claim}"))
            .expect("the bench file holds the claim");
        let mut ours = super::CLAIM_SQL.to_string();
        for (param, value) in [
            ("$3::uuid", "NULL::uuid"),
            ("$5::uuid", "NULL::uuid"),
            ("$1", "'pgbench:' || :client_id::text"),
            ("$2", "interval '60 seconds'"),
            ("$3", "NULL::uuid"),
            ("$4", "1"),
            ("$5", "NULL::uuid"),
        ] {
            ours = ours.replace(param, value);
        }
        let words = |sql: &str| sql.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            words(&copy),
            words(&ours),
            "bench/pgbench_claim_complete.sql does not run the claim of state_machine.rs"
        );
    }
}
