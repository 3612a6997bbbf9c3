//! generator_throughput: how many jobs per second the generator moves from
//! claim to completed when the provider costs nothing.
//!
//! For each count of generator processes (`--procs`, default 1 and 2):
//! 1. a fresh database (`cairn_testkit::spawn_app`: migrations, bootstrap
//!    project, an idle API);
//! 2. `--jobs` due observation jobs from `seed_jobs`, one Edit event each, all
//!    in one session (`--sessions N` moves them round-robin onto N sessions);
//! 3. their `next_attempt_at` spread 1 ms apart, as jobs made due one at a
//!    time are (`--tied-due` keeps seed_jobs' single timestamp: the claim
//!    orders by next_attempt_at, id, the index has next_attempt_at only, so
//!    every claim then sorts the whole backlog), and `VACUUM ANALYZE`;
//! 4. that many release `cairn-generator` processes (found beside this
//!    executable): the offline `heuristic` provider, `--workers` workers
//!    each, a 250 ms sweep;
//! 5. when every job is completed, figures from the rows themselves:
//!    jobs/s = jobs / (max(completed_at) - min(started_at)), and the per-job
//!    claim → complete time (completed_at - started_at) at p50 and p99.
//!    `completed_at` is `now()` of the completion transaction, i.e. its start.
//!
//! `--prepare-pgbench-db` instead makes a fresh database for
//! `bench/pgbench_claim_complete.sql` and prints `<url> <team_id> <project_id>`;
//! `bench/generator.sh` seeds it and runs pgbench (the SQL-only bound).

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use cairn_bench::drop_database;
use cairn_testkit::{TestApp, seed_jobs, spawn_app};
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Jobs seeded for each run.
    #[arg(long, default_value_t = 5000)]
    jobs: i64,
    /// CAIRN_WORKERS of each generator process.
    #[arg(long, default_value_t = 8)]
    workers: usize,
    /// Generator process counts to measure, each on a fresh database.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    procs: Vec<usize>,
    /// Spread the seeded jobs over this many sessions (seed_jobs makes one).
    #[arg(long, default_value_t = 1)]
    sessions: i32,
    /// Keep seed_jobs' one shared next_attempt_at instead of spreading it.
    #[arg(long)]
    tied_due: bool,
    /// Give up on a run after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// Only create a migrated database for pgbench and print `<url> <team_id> <project_id>`.
    #[arg(long)]
    prepare_pgbench_db: bool,
}

/// The generator processes of one run; killed when dropped.
struct Generators(Vec<Child>);

impl Drop for Generators {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.prepare_pgbench_db {
        let app = spawn_app().await;
        println!("{} {} {}", app.database_url, app.team_id, app.project_id);
        return Ok(());
    }
    for &procs in &args.procs {
        run(&args, procs).await?;
    }
    Ok(())
}

async fn run(args: &Args, procs: usize) -> anyhow::Result<()> {
    let app = spawn_app().await;
    seed_jobs(&app.pool, app.team_id, app.project_id, args.jobs).await;
    if args.sessions > 1 {
        spread_sessions(&app, args.sessions).await?;
    }
    if !args.tied_due {
        sqlx::query(
            "UPDATE generation_jobs SET next_attempt_at = now() - ($1 - prompt_number) * interval '1 ms'",
        )
        .bind(args.jobs as i32)
        .execute(&app.pool)
        .await?;
    }
    sqlx::raw_sql("VACUUM ANALYZE generation_jobs")
        .execute(&app.pool)
        .await?;

    let binary = std::env::current_exe()?.with_file_name("cairn-generator");
    let generators = Generators(
        (0..procs)
            .map(|_| spawn_generator(&binary, &app, args.workers))
            .collect::<anyhow::Result<_>>()?,
    );
    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    loop {
        let (done, failed): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'failed')
             FROM generation_jobs",
        )
        .fetch_one(&app.pool)
        .await?;
        if done + failed >= args.jobs {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "{done} of {} jobs completed within {} s",
                args.jobs,
                args.timeout_secs
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(generators);

    let (completed, failed, seconds, p50, p99): (i64, i64, f64, f64, f64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'completed'),
                count(*) FILTER (WHERE status = 'failed'),
                extract(epoch FROM max(completed_at) - min(started_at))::float8,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at)),
                percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at))
         FROM generation_jobs",
    )
    .fetch_one(&app.pool)
    .await?;
    let observations: i64 = sqlx::query_scalar("SELECT count(*) FROM observations")
        .fetch_one(&app.pool)
        .await?;
    println!(
        "generator_throughput procs={procs} workers={} jobs={} sessions={} tied_due={} completed={completed} failed={failed} \
         observations={observations} seconds={seconds:.3} jobs_per_s={:.0} p50_ms={:.1} p99_ms={:.1}",
        args.workers,
        args.jobs,
        args.sessions,
        args.tied_due,
        completed as f64 / seconds,
        p50 * 1000.0,
        p99 * 1000.0,
    );
    drop_database(&app.pool, &app.database_url).await
}

/// Moves the seeded jobs and their events round-robin onto `n` new sessions.
async fn spread_sessions(app: &TestApp, n: i32) -> sqlx::Result<()> {
    let mut tx = app.pool.begin().await?;
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, prompt_counter)
         SELECT gen_random_uuid(), $1, $2, 'claude-code', 'bench-' || g, 0 FROM generate_series(0, $3 - 1) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(n)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE generation_jobs j SET session_id = s.id FROM sessions s
         WHERE s.external_session_id = 'bench-' || (j.prompt_number % $1)",
    )
    .bind(n)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE agent_events e SET session_id = j.session_id FROM generation_jobs j WHERE e.job_id = j.id",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

fn spawn_generator(binary: &std::path::Path, app: &TestApp, workers: usize) -> anyhow::Result<Child> {
    Command::new(binary)
        .env_clear()
        .env("CAIRN_DATABASE_URL", &app.database_url)
        .env("CAIRN_REDIS_URL", &app.env["CAIRN_REDIS_URL"])
        .env("CAIRN_PROVIDER", "heuristic")
        .env("CAIRN_WORKERS", workers.to_string())
        .env("CAIRN_SWEEP_MS", "250")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("spawn {} (build it with cargo build --release)", binary.display()))
}
