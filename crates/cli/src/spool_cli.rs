//! `cairn spool status` and `cairn spool flush` (the flush itself is the
//! hook crate's: `cairn-hook spool flush --quiet` runs it too).

use std::io::Write;

use clap::Subcommand;

use crate::{
    client_config::ClientConfig,
    spool::{Spool, flush},
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

fn format_age(ms: i64) -> String {
    let s = ms / 1000;
    match s {
        ..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h {}m ago", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h ago", s / 86_400, s % 86_400 / 3600),
    }
}
