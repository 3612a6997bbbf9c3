//! generator_throughput: how many jobs per second the generator moves from
//! claim to completed when the provider costs nothing.
//!
//! For each count of generator processes (`--procs`, default 1 and 2): a
//! fresh database (`cairn_testkit::spawn_app`, migrations and bootstrap
//! project), `--jobs` due observation jobs from `seed_jobs` (one Edit event
//! each, all in one session), `ANALYZE`, then that many release
//! `cairn-generator` processes (found beside this executable) with the
//! offline `heuristic` provider, `--workers` workers each and a 250 ms sweep.
//! When every job is completed the figures come from the rows themselves:
//! jobs/s = jobs / (max(completed_at) - min(started_at)), and the per-job
//! claim → complete time (completed_at - started_at) at p50 and p99.
//! `completed_at` is `now()` of the completion transaction, i.e. its start.
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
    sqlx::query("ANALYZE generation_jobs").execute(&app.pool).await?;

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
        "generator_throughput procs={procs} workers={} jobs={} completed={completed} failed={failed} \
         observations={observations} seconds={seconds:.3} jobs_per_s={:.0} p50_ms={:.1} p99_ms={:.1}",
        args.workers,
        args.jobs,
        completed as f64 / seconds,
        p50 * 1000.0,
        p99 * 1000.0,
    );
    drop_database(&app.pool, &app.database_url).await
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
