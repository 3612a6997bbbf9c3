//! `cairn spool status` and `cairn spool flush`.

use std::io::Write;

use clap::Subcommand;

use super::{Outcome, Spool, replay};
use crate::{
    client_config::ClientConfig,
    hook::{log, wire::Wire},
};

#[derive(Subcommand)]
pub enum SpoolCommand {
    /// Show the backlog: events waiting, bytes, oldest, dropped.
    Status,
    /// Deliver the backlog now, in order.
    Flush {
        /// Print nothing, and leave if another flush is running (used when a
        /// hook hands a long backlog to the background).
        #[arg(long)]
        quiet: bool,
    },
}

pub fn run(command: SpoolCommand, config: &ClientConfig) -> anyhow::Result<()> {
    let spool = Spool::for_config(config);
    match command {
        SpoolCommand::Status => status(&spool),
        SpoolCommand::Flush { quiet } => flush(&spool, config, quiet),
    }
}

fn status(spool: &Spool) -> anyhow::Result<()> {
    let snapshot = spool.snapshot()?;
    let now = chrono::Utc::now().timestamp_millis();
    let oldest = snapshot
        .entries
        .first()
        .map(|e| format_age(now.saturating_sub(e.at)))
        .unwrap_or_else(|| "-".into());
    let mut out = std::io::stdout().lock();
    writeln!(out, "events waiting: {}", snapshot.entries.len())?;
    writeln!(out, "bytes: {}", snapshot.bytes)?;
    writeln!(out, "oldest: {oldest}")?;
    writeln!(out, "dropped (spool full): {}", spool.dropped())?;
    writeln!(out, "path: {}", spool.path().display())?;
    Ok(())
}

fn flush(spool: &Spool, config: &ClientConfig, quiet: bool) -> anyhow::Result<()> {
    let guard = if quiet {
        match spool.try_flush_lock()? {
            Some(g) => g,
            None => return Ok(()),
        }
    } else {
        spool.flush_lock()?
    };
    let wire = Wire::new(config);
    let report = replay(spool, guard, None, None, |e| wire.send(e, true, None))?;
    for why in &report.rejected {
        log::error(
            &config.spool_dir,
            "spool",
            &format!("dropped from the spool (the server refused it): {why}"),
        );
    }
    let left = spool.snapshot()?.entries.len();
    if let Outcome::Failed(why) = &report.outcome {
        if quiet {
            log::error(
                &config.spool_dir,
                "spool",
                &format!("background flush stopped: {why}"),
            );
            return Ok(());
        }
        anyhow::bail!("delivered {}, {left} still waiting: {why}", report.delivered);
    }
    if !quiet {
        println!(
            "delivered {}, refused {}, {left} waiting",
            report.delivered,
            report.rejected.len()
        );
    }
    Ok(())
}

fn format_age(ms: i64) -> String {
    let s = ms / 1000;
    match s {
        ..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h {}m ago", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h ago", s / 86_400, s % 86_400 / 3600),
    }
}
