//! Replaying the spool in order: one flusher at a time (the flush lock),
//! stopping at the first failure or when the time is up, committing progress
//! as it goes (delivery is idempotent, so a crash only resends a few).

use std::{collections::HashSet, time::Instant};

use super::{Entry, FlushGuard, Spool};

/// Commit the delivered prefix this often during a long replay.
const COMMIT_EVERY: usize = 500;

/// What became of one delivery attempt.
#[derive(Debug)]
pub enum Sent {
    /// The server took it; its answer body when that was JSON.
    Delivered(Option<String>),
    /// Worth trying again later (server away, timeout, 5xx, 429, project unresolved).
    Retry(String),
    /// Refused for good (another 4xx): dropped, and logged by the caller.
    Rejected(String),
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing left to send.
    Drained,
    /// A delivery failed; the rest waits.
    Failed(String),
    /// The deadline came first.
    OutOfTime,
}

#[derive(Debug)]
pub struct Report {
    pub delivered: usize,
    /// Entries refused for good, with the server's reason.
    pub rejected: Vec<String>,
    pub outcome: Outcome,
    /// The answer to the entry with the watched key, if it was delivered.
    pub watched: Option<String>,
}

/// Sends the spool's entries in order until it is empty, a send fails, or
/// `deadline` passes. `send` gets each entry; the flush lock is released on
/// return (while the append lock is held when drained, so that an event
/// appended by a process that found the flush lock busy is never stranded).
pub fn replay(
    spool: &Spool,
    flush: FlushGuard,
    deadline: Option<Instant>,
    watch: Option<&str>,
    mut send: impl FnMut(&Entry) -> Sent,
) -> std::io::Result<Report> {
    let mut report = Report {
        delivered: 0,
        rejected: Vec::new(),
        outcome: Outcome::Drained,
        watched: None,
    };
    loop {
        if let Some(append) = spool.check_drained()? {
            drop(flush);
            drop(append);
            return Ok(report);
        }
        let snapshot = spool.snapshot()?;
        let mut done: HashSet<String> = HashSet::new();
        for entry in &snapshot.entries {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                report.outcome = Outcome::OutOfTime;
                break;
            }
            match send(entry) {
                Sent::Delivered(answer) => {
                    report.delivered += 1;
                    if watch == Some(entry.key.as_str()) {
                        report.watched = answer;
                    }
                }
                Sent::Rejected(why) => report.rejected.push(why),
                Sent::Retry(why) => {
                    report.outcome = Outcome::Failed(why);
                    break;
                }
            }
            done.insert(entry.key.clone());
            if done.len() >= COMMIT_EVERY {
                spool.remove_delivered(&done)?;
                done.clear();
            }
        }
        spool.remove_delivered(&done)?;
        if report.outcome != Outcome::Drained {
            return Ok(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::value::RawValue;

    use super::*;

    fn fill(spool: &Spool, n: usize) {
        for i in 0..n {
            let body = RawValue::from_string(format!(r#"{{"i":{i}}}"#)).unwrap();
            spool
                .append(&Entry::new("claude-code", &format!("k{i}"), 0, "", body))
                .unwrap();
        }
    }

    #[test]
    fn replays_in_order_and_stops_at_the_first_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::new(tmp.path(), "http://x", "t", 1 << 24);
        fill(&spool, 1200);
        let mut seen = Vec::new();
        let flush = spool.try_flush_lock().unwrap().unwrap();
        let report = replay(&spool, flush, None, Some("k3"), |e| {
            if e.key == "k1100" {
                return Sent::Retry("down".into());
            }
            seen.push(e.key.clone());
            Sent::Delivered(Some(format!("\"{}\"", e.key)))
        })
        .unwrap();
        assert_eq!(report.outcome, Outcome::Failed("down".into()));
        assert_eq!(report.delivered, 1100);
        assert_eq!(report.watched.as_deref(), Some("\"k3\""));
        assert_eq!(seen, (0..1100).map(|i| format!("k{i}")).collect::<Vec<_>>());
        let left = spool.snapshot().unwrap().entries;
        assert_eq!(left.len(), 100);
        assert_eq!(left[0].key, "k1100");
        // The flush lock was released.
        assert!(spool.try_flush_lock().unwrap().is_some());
    }

    #[test]
    fn rejected_entries_are_dropped_and_replay_goes_on() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::new(tmp.path(), "http://x", "t", 1 << 24);
        fill(&spool, 3);
        let flush = spool.try_flush_lock().unwrap().unwrap();
        let report = replay(&spool, flush, None, None, |e| match e.key.as_str() {
            "k1" => Sent::Rejected("422".into()),
            _ => Sent::Delivered(None),
        })
        .unwrap();
        assert_eq!(report.outcome, Outcome::Drained);
        assert_eq!((report.delivered, report.rejected.len()), (2, 1));
        assert!(!spool.has_backlog());
    }

    #[test]
    fn the_deadline_stops_replay_and_keeps_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::new(tmp.path(), "http://x", "t", 1 << 24);
        fill(&spool, 10);
        let flush = spool.try_flush_lock().unwrap().unwrap();
        let deadline = Instant::now() + Duration::from_millis(30);
        let report = replay(&spool, flush, Some(deadline), None, |_| {
            std::thread::sleep(Duration::from_millis(10));
            Sent::Delivered(None)
        })
        .unwrap();
        assert_eq!(report.outcome, Outcome::OutOfTime);
        let left = spool.snapshot().unwrap().entries.len();
        assert_eq!(left + report.delivered, 10);
        assert!(left > 0);
    }

    #[test]
    fn only_one_flusher_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::new(tmp.path(), "http://x", "t", 1 << 24);
        let held = spool.try_flush_lock().unwrap().unwrap();
        assert!(spool.try_flush_lock().unwrap().is_none());
        drop(held);
        assert!(spool.try_flush_lock().unwrap().is_some());
    }
}
