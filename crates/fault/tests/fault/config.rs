//! The suite's knobs, from `CAIRN_FAULT_*` environment variables (small
//! defaults, so `cargo test --workspace` stays quick).

use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Knobs {
    /// Events per scenario, rounded up to whole sessions (`CAIRN_FAULT_EVENTS`).
    pub events: usize,
    /// Concurrent clients (`CAIRN_FAULT_CLIENTS`).
    pub clients: usize,
    /// Turns per session (`CAIRN_FAULT_TURNS`).
    pub turns: usize,
    /// Tool events per turn (`CAIRN_FAULT_TOOLS`).
    pub tools: usize,
    /// How long one event is retried before the client gives up (`CAIRN_FAULT_RETRY_SECS`).
    pub retry_deadline: Duration,
    /// One request's timeout (`CAIRN_FAULT_REQUEST_TIMEOUT_MS`).
    pub request_timeout: Duration,
    /// How long jobs may take to drain once the load stopped (`CAIRN_FAULT_DRAIN_SECS`).
    pub drain: Duration,
    /// How many times a scenario injects its fault (`CAIRN_FAULT_REPEAT`).
    pub repeat: usize,
    /// How long a killed or stopped service stays down (`CAIRN_FAULT_DOWN_MS`).
    pub down: Duration,
}

fn var<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a valid value")),
        _ => default,
    }
}

impl Knobs {
    pub fn from_env() -> Knobs {
        Knobs {
            events: var("CAIRN_FAULT_EVENTS", 600usize).max(1),
            clients: var("CAIRN_FAULT_CLIENTS", 8usize).max(1),
            turns: var("CAIRN_FAULT_TURNS", 3usize).max(1),
            tools: var("CAIRN_FAULT_TOOLS", 3usize),
            retry_deadline: Duration::from_secs(var("CAIRN_FAULT_RETRY_SECS", 90u64)),
            request_timeout: Duration::from_millis(var("CAIRN_FAULT_REQUEST_TIMEOUT_MS", 10_000u64)),
            drain: Duration::from_secs(var("CAIRN_FAULT_DRAIN_SECS", 60u64)),
            repeat: var("CAIRN_FAULT_REPEAT", 2usize).max(1),
            down: Duration::from_millis(var("CAIRN_FAULT_DOWN_MS", 1_000u64)),
        }
    }
}
