//! Getting one event to the server in order: the spool's backlog first
//! (within the budget), then the event itself; what cannot go now is spooled.

use std::time::Instant;

use super::{background, log, wire::Wire};
use crate::{
    client_config::ClientConfig,
    spool::{self, Entry, Outcome, Sent, Spool},
};

/// Delivers `entry` by `deadline`; the server's JSON answer when it took it directly.
pub fn deliver(config: &ClientConfig, entry: &Entry, deadline: Instant) -> Option<String> {
    let spool = Spool::for_config(config);
    let wire = Wire::new(config);
    let agent = entry.agent.as_str();
    let log = |message: &str| log::error(&config.spool_dir, agent, message);
    if spool.has_backlog() {
        match spool.try_flush_lock() {
            Ok(Some(flush)) => {
                // The oldest event first, alone: while the server is away this
                // costs one line of the spool, not a parse of all of it.
                if let Ok(Some(head)) = spool.head()
                    && let Sent::Retry(why) = wire.send(&head, true, Some(deadline))
                {
                    drop(flush);
                    save(&spool, entry, &log);
                    log(&format!("spooled behind the backlog: {why}"));
                    return None;
                }
                // A spool that cannot be read does not stop the event itself.
                let outcome = replay(&spool, &wire, flush, deadline, None, &log);
                match outcome {
                    Some(Outcome::Failed(why)) => {
                        save(&spool, entry, &log);
                        log(&format!("spooled behind the backlog: {why}"));
                        return None;
                    }
                    Some(Outcome::OutOfTime) => {
                        save(&spool, entry, &log);
                        background::flush();
                        return None;
                    }
                    Some(Outcome::Drained) | None => {}
                }
            }
            Ok(None) => return behind_another_flusher(&spool, &wire, entry, deadline, &log),
            Err(e) => log(&format!("spool lock: {e}")),
        }
    }
    match wire.send(entry, false, Some(deadline)) {
        Sent::Delivered(answer) => answer,
        Sent::Retry(why) => {
            save(&spool, entry, &log);
            log(&format!("spooled: {why}"));
            None
        }
        Sent::Rejected(why) => {
            log(&format!("dropped (the server refused it): {why}"));
            None
        }
    }
}

/// Another process is replaying: queue behind its backlog so that order
/// holds, then take over if it has just finished.
fn behind_another_flusher(
    spool: &Spool,
    wire: &Wire,
    entry: &Entry,
    deadline: Instant,
    log: &dyn Fn(&str),
) -> Option<String> {
    if !save(spool, entry, log) {
        return None;
    }
    let Ok(Some(flush)) = spool.try_flush_lock() else {
        // The flusher still holds it and will find our line before it lets go.
        return None;
    };
    let mut answer = None;
    let outcome = replay(spool, wire, flush, deadline, Some((&entry.key, &mut answer)), log)?;
    if outcome == Outcome::OutOfTime {
        background::flush();
    }
    answer
}

/// Replays within the deadline; logs refusals. `None` when the spool failed.
fn replay(
    spool: &Spool,
    wire: &Wire,
    flush: spool::FlushGuard,
    deadline: Instant,
    watch: Option<(&str, &mut Option<String>)>,
    log: &dyn Fn(&str),
) -> Option<Outcome> {
    let key = watch.as_ref().map(|(k, _)| *k);
    let report = spool::replay(spool, flush, Some(deadline), key, |e| {
        wire.send(e, true, Some(deadline))
    });
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            log(&format!("spool replay: {e}"));
            return None;
        }
    };
    for why in &report.rejected {
        log(&format!("dropped from the spool (the server refused it): {why}"));
    }
    if let Some((_, slot)) = watch {
        *slot = report.watched;
    }
    Some(report.outcome)
}

/// Appends to the spool; false (and logged) when even that failed.
fn save(spool: &Spool, entry: &Entry, log: &dyn Fn(&str)) -> bool {
    match spool.append(entry) {
        Ok(()) => true,
        Err(e) => {
            log(&format!(
                "event lost: cannot write the spool {}: {e}",
                spool.path().display()
            ));
            false
        }
    }
}
