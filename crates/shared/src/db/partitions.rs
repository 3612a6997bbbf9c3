//! The weekly partitions of raw events and of the job event log
//! (migration 0029): created eight weeks ahead at every start and by the
//! generator's upkeep, so a row lands in the default partition only when no
//! process has run for that long.

use sqlx::PgConnection;

/// The tables partitioned by week.
pub const PARTITIONED: [&str; 2] = ["agent_events", "generation_job_events"];

/// How far ahead weekly partitions exist.
const AHEAD: &str = "8 weeks";

/// Creates the missing weekly partitions; returns how many it made. Safe
/// to run from several processes at once.
#[tracing::instrument(skip_all, err)]
pub async fn ensure_partitions(conn: &mut PgConnection) -> sqlx::Result<i32> {
    let mut created = 0;
    for table in PARTITIONED {
        created +=
            sqlx::query_scalar::<_, i32>("SELECT cairn_ensure_weekly_partitions($1::regclass, $2::interval)")
                .bind(table)
                .bind(AHEAD)
                .fetch_one(&mut *conn)
                .await?;
    }
    Ok(created)
}
