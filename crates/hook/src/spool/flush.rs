//! Delivering the backlog now, in order: `cairn spool flush`, and the
//! detached `spool flush --quiet` a hook hands a long backlog to.

use super::{Outcome, Spool, replay};
use crate::{
    client_config::ClientConfig,
    hook::{log, wire::Wire},
};

/// Delivers what waits. `quiet`: print nothing, leave at once if another
/// flush runs, and log (not return) a failure.
pub fn flush(spool: &Spool, config: &ClientConfig, quiet: bool) -> anyhow::Result<()> {
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
