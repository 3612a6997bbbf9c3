//! `cairn hook <agent>`: the command hook every agent runs (docs/hook-client.md).
//! Reads the event, filters it, replays the spool, posts the event within the
//! budget, prints the agent's answer. Always exits 0; prints nothing but the answer.

mod background;
mod changed;
mod deliver;
mod event;
pub mod file_hash;
/// Also used by `cairn doctor`, which asks what a hook would send.
pub mod git;
pub mod log;
pub mod query;
mod transcript;
mod windsurf;
pub mod wire;

use std::{io::Write, panic::AssertUnwindSafe, thread, time::Instant};

use cairn_privacy::{PrivacyConfig, PrivacyFilter};

use crate::{
    agent::Agent,
    client_config::{ClientConfig, Env},
};

/// Runs one hook call; never fails the agent.
pub fn run(agent: Agent, env: &dyn Env) {
    let started = Instant::now();
    // Compiling the filter's regexes is the costliest step of a call (~10 ms):
    // it runs on its own thread while stdin, config and git are read.
    let filter = thread::spawn(|| PrivacyFilter::new(PrivacyConfig::default()));
    let answer = std::panic::catch_unwind(AssertUnwindSafe(|| call(agent, env, started, filter)))
        .ok()
        .flatten();
    print(agent, answer.as_deref());
}

fn call(
    agent: Agent,
    env: &dyn Env,
    started: Instant,
    filter: thread::JoinHandle<PrivacyFilter>,
) -> Option<String> {
    let config = match ClientConfig::load(env) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn hook {agent}: {e:#}");
            return None;
        }
    };
    let deadline = started + config.timeout;
    let spool_dir = config.spool_dir.clone();
    let prepared = event::read(agent, &config, filter);
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => {
            log::error(&spool_dir, agent.slug(), &format!("event not sent: {e:#}"));
            return None;
        }
    };
    let answer = deliver::deliver(&config, &prepared.entry, deadline);
    if agent == Agent::Windsurf {
        refresh_windsurf_rules(&config, &prepared, answer.as_deref());
        return None;
    }
    answer
}

fn refresh_windsurf_rules(config: &ClientConfig, prepared: &event::Prepared, answer: Option<&str>) {
    let Some(answer) = answer else { return };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(answer) else {
        return;
    };
    if let Some(markdown) = value["memoryMarkdown"].as_str()
        && let Err(e) = windsurf::write_rules(&prepared.workspace, markdown)
    {
        log::error(&config.spool_dir, "windsurf", &format!("rules file: {e}"));
    }
}

/// The server's answer as it came, else the agent's empty answer.
fn print(agent: Agent, answer: Option<&str>) {
    let text = match (agent, answer) {
        (Agent::Windsurf, _) => return,
        (_, Some(answer)) => answer,
        (_, None) => "{}",
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
