//! recall: does what Cairn keeps come back when asked? Replays the coding
//! sessions of `bench/recall/` (facts planted in command output, files read,
//! final messages, edits) through a real API and the heuristic generator,
//! then prints, per set and search mode, fact retention (in the prompt, in
//! stored rows) and recall@5 and MRR of search and of the injected context.
//! `--out` writes the JSON report; `--write-baseline` the eval set's figures
//! as the baseline the `recall` test holds the small profile to.

use std::path::PathBuf;

use anyhow::Context;
use cairn_bench::recall::{self, Profile, data::Set, report};
use clap::{Parser, ValueEnum};

#[derive(Clone, Copy, ValueEnum)]
enum ProfileArg {
    Small,
    Full,
}

#[derive(Clone, Copy, ValueEnum)]
enum SetArg {
    Tune,
    Eval,
    Both,
}

#[derive(Parser)]
struct Args {
    #[arg(long, value_enum, default_value = "small")]
    profile: ProfileArg,
    #[arg(long, value_enum, default_value = "both")]
    set: SetArg,
    /// Write the JSON report here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the eval set's figures here as a baseline (bench/recall/baseline.json).
    #[arg(long)]
    write_baseline: Option<PathBuf>,
    /// The data directory (default: bench/recall of this repository).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Ask the questions again after this many newer memories in each
    /// project (repeatable, ascending: `--scale 10000 --scale 100000`).
    /// Needs the embedding model.
    #[arg(long)]
    scale: Vec<usize>,
    /// The newer memories' vectors: `own` (each note's text embedded, as a
    /// real memory's; cached on disk after the first run) or `titles` (one of
    /// 200 embedded titles plus noise, the corpus of reports before 2026-11-29).
    #[arg(long, value_enum, default_value = "own")]
    scale_vectors: recall::scale::Vectors,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // `RUST_LOG` (as for the services) shows the engine's and the gate's
    // decisions on stderr.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let profile = match args.profile {
        ProfileArg::Small => Profile::Small,
        ProfileArg::Full => Profile::Full,
    };
    let sets = match args.set {
        SetArg::Tune => vec![Set::Tune],
        SetArg::Eval => vec![Set::Eval],
        SetArg::Both => vec![Set::Tune, Set::Eval],
    };
    let dir = args.data.unwrap_or_else(recall::data_dir);
    let started = std::time::Instant::now();
    let report = recall::run(&dir, profile, &sets, &args.scale, args.scale_vectors).await?;
    print!("{}", report::table(&report));
    println!("elapsed {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.out {
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.write_baseline {
        let baseline = report::Baseline::of(&report, Set::Eval).context("the run has no eval set")?;
        std::fs::write(path, serde_json::to_string_pretty(&baseline)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
