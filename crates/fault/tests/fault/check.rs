//! After a scenario, with the load stopped and the jobs drained: what the
//! database holds against what the clients were told, the job table, open
//! transactions, and the Postgres log. Renders one table row per scenario
//! and the list of failed checks, with evidence.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
    time::Duration,
};

use sqlx::PgPool;

use crate::load::{Ledger, MARKER_REGEX, Stats};

/// Postgres's warning when BEGIN meets a connection already in a transaction.
pub const ALREADY_IN_TX: &str = "there is already a transaction in progress";
/// Postgres's message when it ends a session left idle in a transaction.
pub const IDLE_TIMEOUT: &str = "idle-in-transaction timeout";

#[derive(Debug, Default)]
pub struct Report {
    pub scenario: String,
    pub sent: usize,
    pub answered: usize,
    pub unanswered: usize,
    /// Rows in agent_events holding one of this scenario's markers.
    pub stored: i64,
    /// Answered 2xx, no row.
    pub lost: usize,
    /// More than one row for one marker.
    pub duplicated: usize,
    /// Answered 2xx on a retry whose row an earlier attempt (its answer
    /// lost, or abandoned) had already stored: the deduplication at work.
    pub stored_by_earlier_attempt: usize,
    pub sessions: usize,
    pub missing_sessions: usize,
    /// Sum over sessions of prompt_counter above the prompts sent.
    pub phantom_turns: i64,
    /// Sum over sessions of prompt_counter below the prompts sent.
    pub missing_turns: i64,
    pub jobs: BTreeMap<String, i64>,
    pub jobs_stuck: i64,
    pub jobs_failed: i64,
    pub double_completions: i64,
    pub duplicate_observations: i64,
    pub duplicate_summaries: i64,
    pub orphan_observations: i64,
    pub drained_in: Option<Duration>,
    /// From the first event sent to the last answered.
    pub load_time: Duration,
    pub idle_in_tx: i64,
    pub idle_in_tx_detail: Vec<String>,
    pub log_already_in_tx: usize,
    pub log_idle_timeouts: usize,
    pub stats: Stats,
    pub unexpected_exits: Vec<(String, String)>,
    pub faults: Vec<String>,
    pub elapsed: Duration,
    /// Evidence for the failures: log lines, queries.
    pub evidence: Vec<String>,
}

/// A session idle in a transaction: pid, application, state, seconds, last query.
type IdleSession = (i32, Option<String>, Option<String>, Option<f64>, Option<String>);

/// One marker's rows: key, turn, when received (for duplicates' evidence).
async fn rows_of(pool: &PgPool, marker: &str) -> Vec<String> {
    let rows: Vec<(String, Option<i32>, String)> = sqlx::query_as(
        "SELECT idempotency_key, prompt_number, to_char(received_at, 'HH24:MI:SS.US')
         FROM agent_events WHERE strpos(payload::text, $1) > 0 ORDER BY received_at",
    )
    .bind(marker)
    .fetch_all(pool)
    .await
    .unwrap_or_default();
    rows.into_iter()
        .map(|(key, turn, at)| format!("{marker}: key {key}, turn {turn:?}, received {at}"))
        .collect()
}

async fn scalar(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, Option<i64>>(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or(0)
}

/// Jobs still queued or processing (None while the database is unreachable).
pub async fn jobs_pending(pool: &PgPool) -> Option<i64> {
    sqlx::query_scalar("SELECT count(*) FROM generation_jobs WHERE status IN ('queued', 'processing')")
        .fetch_one(pool)
        .await
        .ok()
}

impl Report {
    /// Reads the database and fills in the checks.
    pub async fn gather(&mut self, pool: &PgPool, database: &str, ledger: &Ledger) {
        self.sent = ledger.events.len();
        self.answered = ledger.events.iter().filter(|e| e.answered).count();
        self.unanswered = self.sent - self.answered;

        let rows: Vec<(String, i64, f64)> = sqlx::query_as(
            "SELECT m.marker, count(*), extract(epoch FROM min(e.received_at))::float8 FROM agent_events e
             CROSS JOIN LATERAL (SELECT DISTINCT x[1] AS marker
                                 FROM regexp_matches(e.payload::text, $1, 'g') AS x) m
             GROUP BY m.marker",
        )
        .bind(format!("({MARKER_REGEX})"))
        .fetch_all(pool)
        .await
        .expect("count events by marker");
        let by_marker: HashMap<String, (i64, f64)> = rows.into_iter().map(|(m, n, t)| (m, (n, t))).collect();
        self.stored = by_marker.values().map(|(n, _)| n).sum();
        let mut lost = vec![];
        let mut duplicated = vec![];
        let mut dup_rows = vec![];
        for e in &ledger.events {
            let (n, received_at) = by_marker.get(&e.marker).copied().unwrap_or((0, 0.0));
            if n > 0 && e.answered_attempt_at.is_some_and(|sent| received_at < sent) {
                self.stored_by_earlier_attempt += 1;
            }
            if e.answered && n == 0 {
                lost.push(format!("{} {} ({})", e.hook, e.marker, e.session));
            }
            if n > 1 {
                duplicated.push(format!("{} {} ×{n} ({})", e.hook, e.marker, e.session));
                if duplicated.len() <= 3 {
                    dup_rows.extend(rows_of(pool, &e.marker).await);
                }
            }
        }
        self.lost = lost.len();
        self.duplicated = duplicated.len();
        if !lost.is_empty() {
            self.evidence
                .push(format!("lost (answered 2xx, no row): {}", sample(&lost)));
        }
        if !duplicated.is_empty() {
            self.evidence
                .push(format!("stored more than once: {}", sample(&duplicated)));
            self.evidence.push(format!("their rows: {}", dup_rows.join("; ")));
        }

        let counters: HashMap<String, i32> =
            sqlx::query_as::<_, (String, i32)>("SELECT external_session_id, prompt_counter FROM sessions")
                .fetch_all(pool)
                .await
                .expect("read sessions")
                .into_iter()
                .collect();
        self.sessions = ledger.sessions.len();
        let mut off = vec![];
        for s in &ledger.sessions {
            match counters.get(&s.external_id) {
                None => self.missing_sessions += 1,
                Some(&n) => {
                    let diff = n as i64 - s.prompts;
                    if diff > 0 {
                        self.phantom_turns += diff;
                    } else {
                        self.missing_turns -= diff;
                    }
                    if diff != 0 {
                        off.push(format!(
                            "{} ({}): prompt_counter {n}, prompts sent {}",
                            s.external_id,
                            if s.keyed { "Idempotency-Key" } else { "no key" },
                            s.prompts
                        ));
                    }
                }
            }
        }
        if !off.is_empty() {
            self.evidence.push(format!("turns: {}", sample(&off)));
        }

        let jobs: Vec<(String, i64)> =
            sqlx::query_as("SELECT status, count(*) FROM generation_jobs GROUP BY status ORDER BY status")
                .fetch_all(pool)
                .await
                .expect("jobs by status");
        self.jobs = jobs.into_iter().collect();
        let get = |s: &str| self.jobs.get(s).copied().unwrap_or(0);
        self.jobs_stuck = get("queued") + get("processing");
        self.jobs_failed = get("failed") + get("cancelled");
        if self.jobs_failed > 0 {
            let errors: Vec<(String, Option<String>)> = sqlx::query_as(
                "SELECT job_type, last_error FROM generation_jobs WHERE status IN ('failed', 'cancelled') LIMIT 5",
            )
            .fetch_all(pool)
            .await
            .unwrap_or_default();
            self.evidence.push(format!("failed jobs: {errors:?}"));
        }
        if self.jobs_stuck > 0 {
            let stuck: Vec<(String, String, i32, Option<String>)> = sqlx::query_as(
                "SELECT job_type, status, attempts, last_error FROM generation_jobs
                 WHERE status IN ('queued', 'processing') LIMIT 5",
            )
            .fetch_all(pool)
            .await
            .unwrap_or_default();
            self.evidence.push(format!("stuck jobs: {stuck:?}"));
        }
        self.double_completions = scalar(
            pool,
            "SELECT count(*) FROM (SELECT job_id FROM generation_job_events WHERE to_status = 'completed'
                                   GROUP BY job_id HAVING count(*) > 1) x",
        )
        .await;
        self.duplicate_observations = scalar(
            pool,
            "SELECT sum(n - 1)::bigint FROM (SELECT count(*) AS n FROM observations
                 GROUP BY job_id, kind, title, narrative, facts, files_read, files_modified
                 HAVING count(*) > 1) x",
        )
        .await;
        self.duplicate_summaries = scalar(
            pool,
            "SELECT count(*) FROM (SELECT job_id FROM summaries GROUP BY job_id HAVING count(*) > 1) x",
        )
        .await;
        self.orphan_observations = scalar(
            pool,
            "SELECT (SELECT count(*) FROM observations o
                     WHERE o.job_id IS NULL
                        OR NOT EXISTS (SELECT 1 FROM generation_jobs j WHERE j.id = o.job_id AND j.status = 'completed'))
                  + (SELECT count(*) FROM summaries s
                     WHERE s.job_id IS NULL
                        OR NOT EXISTS (SELECT 1 FROM generation_jobs j WHERE j.id = s.job_id AND j.status = 'completed'))",
        )
        .await;

        // A transaction that is still open a second after the last request is a leak.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let idle: Vec<IdleSession> = sqlx::query_as(
            "SELECT pid, application_name, state,
                    extract(epoch FROM now() - state_change)::float8, left(query, 160)
             FROM pg_stat_activity
             WHERE datname = $1 AND state IN ('idle in transaction', 'idle in transaction (aborted)')
               AND state_change < now() - interval '1 second'",
        )
        .bind(database)
        .fetch_all(pool)
        .await
        .expect("pg_stat_activity");
        self.idle_in_tx = idle.len() as i64;
        self.idle_in_tx_detail = idle
            .iter()
            .map(|(pid, app, state, age, query)| {
                format!(
                    "pid {pid} app={} {} for {:.1}s, last query: {}",
                    app.as_deref().unwrap_or("?"),
                    state.as_deref().unwrap_or("?"),
                    age.unwrap_or(0.0),
                    query
                        .as_deref()
                        .unwrap_or("")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })
            .collect();
    }

    /// Reads the Postgres log (this scenario's cluster) and the services' logs.
    pub fn read_logs(&mut self, postgres_log: &Path, services: &[(String, std::path::PathBuf)]) {
        let pg = std::fs::read_to_string(postgres_log).unwrap_or_default();
        let already: Vec<&str> = pg.lines().filter(|l| l.contains(ALREADY_IN_TX)).collect();
        let timeouts: Vec<&str> = pg.lines().filter(|l| l.contains(IDLE_TIMEOUT)).collect();
        self.log_already_in_tx = already.len();
        self.log_idle_timeouts = timeouts.len();
        if let Some(first) = already.first() {
            self.evidence
                .push(format!("postgres.log ×{}: {first}", already.len()));
        }
        if let Some(first) = timeouts.first() {
            self.evidence
                .push(format!("postgres.log ×{}: {first}", timeouts.len()));
        }
        for (name, path) in services {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let summary = summarize_levels(&text, &["ERROR"]);
            if !summary.is_empty() {
                self.evidence.push(format!("{name} errors: {summary}"));
            }
        }
    }

    /// The checks that failed, one line each.
    pub fn failures(&self) -> Vec<String> {
        let mut f = vec![];
        let mut check = |bad: bool, what: String| {
            if bad {
                f.push(what);
            }
        };
        check(
            self.unanswered > 0,
            format!(
                "{} events never answered 2xx within the retry deadline",
                self.unanswered
            ),
        );
        check(
            !self.stats.refused.is_empty(),
            format!(
                "{} events refused with a 4xx: {}",
                self.stats.refused.len(),
                sample(&self.stats.refused)
            ),
        );
        check(
            self.lost > 0,
            format!("{} events answered 2xx are not stored", self.lost),
        );
        check(
            self.duplicated > 0,
            format!("{} events are stored more than once", self.duplicated),
        );
        check(
            self.missing_sessions > 0,
            format!("{} sessions have no row", self.missing_sessions),
        );
        check(
            self.phantom_turns > 0,
            format!(
                "{} phantom turns (prompt_counter above the prompts sent)",
                self.phantom_turns
            ),
        );
        check(
            self.missing_turns > 0,
            format!(
                "{} turns missing (prompt_counter below the prompts sent)",
                self.missing_turns
            ),
        );
        check(
            self.jobs_stuck > 0,
            format!(
                "{} jobs still queued or processing after the drain",
                self.jobs_stuck
            ),
        );
        check(
            self.jobs_failed > 0,
            format!("{} jobs failed or cancelled", self.jobs_failed),
        );
        check(
            self.double_completions > 0,
            format!("{} jobs completed more than once", self.double_completions),
        );
        check(
            self.duplicate_observations > 0,
            format!("{} duplicated observations", self.duplicate_observations),
        );
        check(
            self.duplicate_summaries > 0,
            format!("{} jobs with more than one summary", self.duplicate_summaries),
        );
        check(
            self.orphan_observations > 0,
            format!(
                "{} observations or summaries of a job that is not completed",
                self.orphan_observations
            ),
        );
        check(
            self.idle_in_tx > 0,
            format!(
                "{} connections idle in transaction after the drain: {}",
                self.idle_in_tx,
                self.idle_in_tx_detail.join("; ")
            ),
        );
        check(
            self.log_already_in_tx > 0,
            format!(
                "Postgres warned \"{ALREADY_IN_TX}\" {} times (a pooled connection came back inside a transaction)",
                self.log_already_in_tx
            ),
        );
        check(
            self.log_idle_timeouts > 0,
            format!(
                "Postgres ended {} sessions left idle in a transaction",
                self.log_idle_timeouts
            ),
        );
        let five_hundreds = self.stats.statuses.get(&500).copied().unwrap_or(0);
        check(
            five_hundreds > 0,
            format!("{five_hundreds} answers were 500 (an unavailable store must answer 503)"),
        );
        f
    }

    pub const HEADER: &'static str = "| scenario | sent | 2xx | stored | lost | dup | phantom turns | jobs (completed/total) | stuck | failed | idle in tx | log: already in tx / idle timeout | 500 | 503 | other non-2xx | conn errors / timeouts | retried events | stored by an earlier attempt | abandoned | load | drain | total |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

    pub fn row(&self) -> String {
        let total: i64 = self.jobs.values().sum();
        let completed = self.jobs.get("completed").copied().unwrap_or(0);
        let s = &self.stats;
        let other: u64 = s
            .statuses
            .iter()
            .filter(|(k, _)| **k != 500 && **k != 503)
            .map(|(_, v)| v)
            .sum();
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {completed}/{total} | {} | {} | {} | {} / {} | {} | {} | {other} | {} / {} | {} | {} | {} | {:.1}s | {} | {:.1}s |",
            self.scenario,
            self.sent,
            self.answered,
            self.stored,
            self.lost,
            self.duplicated,
            if self.missing_turns > 0 {
                format!("+{} / -{}", self.phantom_turns, self.missing_turns)
            } else {
                self.phantom_turns.to_string()
            },
            self.jobs_stuck,
            self.jobs_failed,
            self.idle_in_tx,
            self.log_already_in_tx,
            self.log_idle_timeouts,
            s.statuses.get(&500).copied().unwrap_or(0),
            s.statuses.get(&503).copied().unwrap_or(0),
            s.conn_errors,
            s.timeouts,
            s.retried_events,
            self.stored_by_earlier_attempt,
            s.abandoned,
            self.load_time.as_secs_f64(),
            self.drained_in
                .map(|d| format!("{:.1}s", d.as_secs_f64()))
                .unwrap_or_else(|| "no".into()),
            self.elapsed.as_secs_f64(),
        )
    }

    /// The table, the faults injected, the failures and their evidence.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n{}\n\n", Self::HEADER, self.row());
        out.push_str(&format!("faults: {}\n", self.faults.join("; ")));
        if !self.stats.statuses.is_empty() {
            let answers: Vec<String> = self
                .stats
                .statuses
                .iter()
                .map(|(k, v)| format!("{k} ×{v}"))
                .collect();
            out.push_str(&format!(
                "answers other than 2xx (retried): {}\n",
                answers.join(", ")
            ));
        }
        if !self.unexpected_exits.is_empty() {
            let exits: Vec<String> = self
                .unexpected_exits
                .iter()
                .map(|(n, s)| format!("{n} ({s})"))
                .collect();
            out.push_str(&format!(
                "processes that exited on their own (restarted): {}\n",
                exits.join(", ")
            ));
        }
        let failures = self.failures();
        if failures.is_empty() {
            out.push_str("result: every check passed\n");
        } else {
            out.push_str("result: FAILED\n");
            for f in &failures {
                out.push_str(&format!("- {f}\n"));
            }
        }
        if !self.evidence.is_empty() {
            out.push_str("evidence:\n");
            for e in &self.evidence {
                out.push_str(&format!("- {e}\n"));
            }
        }
        out
    }
}

fn sample(items: &[String]) -> String {
    let mut s = items.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > 5 {
        s.push_str(&format!("; … ({} in all)", items.len()));
    }
    s
}

/// Distinct log messages at the given levels, most frequent first:
/// `×n message` (the timestamp cut off, fields kept).
fn summarize_levels(text: &str, levels: &[&str]) -> String {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let Some(level) = levels.iter().find(|l| line.contains(&format!(" {l} "))) else {
            continue;
        };
        let msg = line
            .split_once(&format!(" {level} "))
            .map(|(_, m)| m)
            .unwrap_or(line);
        let msg: String = strip_ansi(msg).chars().take(220).collect();
        *counts.entry(format!("{level} {msg}")).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.iter()
        .take(4)
        .map(|(m, n)| format!("×{n} {m}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
