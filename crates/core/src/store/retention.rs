//! Raw-event retention: raw events past their project's retention are
//! shed a week's partition at a time (migration 0029), never an event that
//! is still needed — one whose session has a job not completed (queued,
//! processing, or failed and so retryable), or whose session is still
//! active. A partition with nothing to keep is detached and dropped; one
//! with a few rows to keep is detached, those rows go back in (they land in
//! the default partition, no weekly one covering them any more) and the
//! rest is dropped; one with more to keep (a project keeping its events
//! longer than the others) loses its expired rows by `DELETE`, as does the
//! default partition. Memories, summaries, jobs and the audit log stay.
//! The job event log sheds its weeks past the deployment's retention the
//! same way, keeping the rows of jobs not completed or cancelled.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Row};

/// Rows a partition may still hold to be dropped whole: they are copied
/// while the partitioned table is locked, so this bounds how long ingest
/// waits behind the drop.
const MOVE_AT_MOST: i64 = 5_000;

/// What one pass shed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shed {
    /// Weekly partitions dropped (raw events and the job event log).
    pub partitions_dropped: u64,
    /// Raw events dropped, with their idempotency keys.
    pub events_dropped: u64,
    /// Expired raw events kept because their work is not done.
    pub events_kept: u64,
    /// Job event log rows dropped.
    pub job_log_dropped: u64,
}

/// One table's retention: which rows have expired, which must stay anyway.
struct Table {
    name: &'static str,
    /// `e` is the row; `$1` the pass's now, `$2` the deployment's default days.
    expired: &'static str,
    keep: &'static str,
    /// Its rows have idempotency keys in `agent_event_keys`, to drop with them.
    keys: bool,
}

const EVENTS: Table = Table {
    name: "agent_events",
    expired: "coalesce((SELECT p.raw_event_retention_days FROM projects p WHERE p.id = e.project_id), $2) > 0
              AND e.received_at < $1 - make_interval(days =>
                  coalesce((SELECT p.raw_event_retention_days FROM projects p WHERE p.id = e.project_id), $2))",
    keep: "EXISTS (SELECT 1 FROM generation_jobs j WHERE j.id = e.job_id
                     AND j.status IN ('queued', 'processing', 'failed'))
           OR EXISTS (SELECT 1 FROM generation_jobs j WHERE j.session_id = e.session_id
                        AND j.status IN ('queued', 'processing', 'failed'))
           OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session_id AND s.status = 'active')",
    keys: true,
};

/// The keys of a dropped partition's range `[$1, $2)` whose event is gone.
const RANGE_KEYS: &str = "DELETE FROM agent_event_keys k
     WHERE k.received_at >= coalesce($1::timestamptz, '-infinity'::timestamptz) AND k.received_at < $2
       AND NOT EXISTS (SELECT 1 FROM agent_events e WHERE e.id = k.event_id AND e.received_at = k.received_at)";

const JOB_LOG: Table = Table {
    name: "generation_job_events",
    expired: "$2 > 0 AND e.created_at < $1 - make_interval(days => $2)",
    keep: "EXISTS (SELECT 1 FROM generation_jobs j WHERE j.id = e.job_id
                     AND j.status IN ('queued', 'processing', 'failed'))",
    keys: false,
};

/// Sheds what has expired as of `now`; `default_days` is the deployment's
/// retention (0: for ever, unless a project sets its own). One process
/// at a time: the others find the work taken and return.
#[tracing::instrument(skip(pool), err)]
pub async fn run(pool: &PgPool, default_days: i32, now: DateTime<Utc>) -> sqlx::Result<Shed> {
    let mut shed = Shed::default();
    let mut conn = pool.acquire().await?;
    let locked: bool =
        sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext('cairn_raw_event_retention'))")
            .fetch_one(&mut *conn)
            .await?;
    if !locked {
        return Ok(shed);
    }
    let result = async {
        let shortest: Option<i32> = sqlx::query_scalar(
            "SELECT min(d) FROM (SELECT coalesce(raw_event_retention_days, $1) AS d FROM projects) p WHERE d > 0",
        )
        .bind(default_days)
        .fetch_one(pool)
        .await?;
        if let Some(days) = shortest {
            let (dropped, events, kept) = shed_table(pool, &EVENTS, days, default_days, now).await?;
            shed.partitions_dropped += dropped;
            shed.events_dropped += events;
            shed.events_kept += kept;
        }
        if default_days > 0 {
            let (dropped, rows, _) = shed_table(pool, &JOB_LOG, default_days, default_days, now).await?;
            shed.partitions_dropped += dropped;
            shed.job_log_dropped += rows;
        }
        Ok(shed)
    }
    .await;
    let _ = sqlx::query("SELECT pg_advisory_unlock(hashtext('cairn_raw_event_retention'))")
        .execute(&mut *conn)
        .await;
    result
}

/// A partition and its range (`None`: unbounded; both `None`: the default,
/// listed first so that rows moved into it are not looked at twice in a pass).
struct Partition {
    name: String,
    lo: Option<DateTime<Utc>>,
    hi: Option<DateTime<Utc>>,
}

#[tracing::instrument(skip(pool))]
async fn partitions(pool: &PgPool, table: &str) -> sqlx::Result<Vec<Partition>> {
    let rows = sqlx::query(
        "SELECT c.relname::text AS name,
                substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''([^'']+)''\\)')::timestamptz AS lo,
                substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''([^'']+)''\\)')::timestamptz AS hi
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = $1::regclass
          ORDER BY hi NULLS FIRST",
    )
    .bind(table)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Partition {
                name: r.try_get("name")?,
                lo: r.try_get("lo")?,
                hi: r.try_get("hi")?,
            })
        })
        .collect()
}

/// Returns (partitions dropped, rows dropped, expired rows kept).
async fn shed_table(
    pool: &PgPool,
    t: &Table,
    shortest_days: i32,
    default_days: i32,
    now: DateTime<Utc>,
) -> sqlx::Result<(u64, u64, u64)> {
    let cutoff = now - chrono::Duration::days(i64::from(shortest_days));
    let (mut dropped, mut rows, mut kept) = (0, 0, 0);
    for p in partitions(pool, t.name).await? {
        let default = p.lo.is_none() && p.hi.is_none();
        if !default && p.hi.is_none_or(|hi| hi > cutoff) {
            continue;
        }
        let counts = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FILTER (WHERE NOT ({expired}) OR ({keep})) AS staying,
                    count(*) FILTER (WHERE ({expired}) AND ({keep})) AS held
               FROM {table} e",
            keep = t.keep,
            expired = t.expired,
            table = p.name
        )))
        .bind(now)
        .bind(default_days)
        .fetch_one(pool)
        .await?;
        let staying: i64 = counts.try_get("staying")?;
        let held: i64 = counts.try_get("held")?;
        kept += held as u64;
        if !default && staying <= MOVE_AT_MOST {
            rows += drop_partition(pool, t, &p, now, default_days).await?;
            dropped += 1;
        } else {
            rows += delete_expired(pool, t, &p.name, now, default_days).await?;
        }
    }
    Ok((dropped, rows, kept))
}

/// Detaches the partition, puts back what must stay (into the default
/// partition), drops the rest. Returns the rows dropped.
#[tracing::instrument(skip(pool, t, p), fields(partition = %p.name), err)]
async fn drop_partition(
    pool: &PgPool,
    t: &Table,
    p: &Partition,
    now: DateTime<Utc>,
    default_days: i32,
) -> sqlx::Result<u64> {
    let mut tx = pool.begin().await?;
    // Ingest waits behind the detach; never for long.
    sqlx::query("SET LOCAL lock_timeout = '500ms'")
        .execute(&mut *tx)
        .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER TABLE {} DETACH PARTITION {}",
        t.name, p.name
    )))
    .execute(&mut *tx)
    .await?;
    let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {}", p.name)))
        .fetch_one(&mut *tx)
        .await?;
    let moved = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO {table} SELECT * FROM {part} e WHERE NOT ({expired}) OR ({keep})",
        table = t.name,
        part = p.name,
        expired = t.expired,
        keep = t.keep
    )))
    .bind(now)
    .bind(default_days)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE {}", p.name)))
        .execute(&mut *tx)
        .await?;
    if t.keys {
        sqlx::query(RANGE_KEYS)
            .bind(p.lo)
            .bind(p.hi)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    tracing::info!(partition = %p.name, dropped = total as u64 - moved, moved, "raw-event partition dropped");
    Ok(total as u64 - moved)
}

/// Deletes the partition's expired rows that nothing needs.
#[tracing::instrument(skip(pool, t), err)]
async fn delete_expired(
    pool: &PgPool,
    t: &Table,
    partition: &str,
    now: DateTime<Utc>,
    default_days: i32,
) -> sqlx::Result<u64> {
    let delete = format!(
        "DELETE FROM {partition} e WHERE ({expired}) AND NOT ({keep})",
        expired = t.expired,
        keep = t.keep
    );
    let sql = match t.keys {
        false => format!("WITH d AS ({delete} RETURNING 1) SELECT count(*) FROM d"),
        true => format!(
            "WITH d AS ({delete} RETURNING e.project_id, e.idempotency_key),
                  k AS (DELETE FROM agent_event_keys k USING d
                         WHERE k.project_id = d.project_id AND k.idempotency_key = d.idempotency_key)
             SELECT count(*) FROM d"
        ),
    };
    let deleted: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(now)
        .bind(default_days)
        .fetch_one(pool)
        .await?;
    Ok(deleted as u64)
}
