//! prompt_tokens: LLM input tokens per 100 tool events, coalesced per turn
//! (as Cairn does) against one provider call per tool event.
//!
//! A realistic Claude Code session is generated in code, deterministically
//! (no randomness): 10 turns, 100 tool events — Reads of 2–8 KB Rust files,
//! Grep and Glob over those files, Edits with old/new strings (and Claude
//! Code's `originalFile` in the response), a Write, `cargo test` with multi-KB
//! stdout, `git diff`, `cargo clippy`, and a few failures (tests, a compile
//! error) — each turn opened by a UserPromptSubmit and closed by a Stop.
//! Every prompt is built by `cairn_generator::prompt::build` with
//! `Budget::default()` and counted with `prompt::estimate_tokens` over system
//! + user:
//! - coalesced: per turn, one observations job (the turn's prompt and all its
//!   tool events, as the ingest path groups them) and one turn summary job;
//! - per event: per tool event, one observations call with the turn's prompt
//!   and that event alone, plus the same turn summary per turn.
//!
//! Also prints how many input tokens are the system prompt, a byte-identical
//! prefix that providers can cache. `--jsonl PATH` writes the session's hook
//! events, one JSON object a line, for inspection.

use std::{collections::BTreeMap, io::Write};

use cairn_bench::workload::{self, ROOT, TURNS};
use cairn_generator::{
    material::{EventRecord, Material},
    prompt::{self, Budget},
};
use cairn_shared::jobs::JobType;
use chrono::{TimeZone, Utc};
use clap::Parser;
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Also write the session's hook events here as JSONL.
    #[arg(long)]
    jsonl: Option<std::path::PathBuf>,
}

const SESSION: &str = "bench-prompt-tokens";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let turns: Vec<Vec<EventRecord>> = (0..TURNS.len()).map(session_turn).collect();
    if let Some(path) = &args.jsonl {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for event in turns.iter().flatten() {
            writeln!(out, "{}", event.payload)?;
        }
    }

    let budget = Budget::default();
    let mut coalesced = Tally::default();
    let mut per_event = Tally::default();
    let mut tool_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut hook_bytes = 0;
    for (number, events) in turns.iter().enumerate() {
        let turn = number as i32 + 1;
        let prompt_event = &events[0];
        let tool_events = &events[1..events.len() - 1];
        for e in tool_events {
            *tool_counts
                .entry(e.tool_name.clone().unwrap_or_default())
                .or_default() += 1;
        }
        hook_bytes += events.iter().map(|e| e.payload.to_string().len()).sum::<usize>();

        let summary = material(JobType::TurnSummary, turn, events.clone());
        let turn_job = material(JobType::Observations, turn, events[..events.len() - 1].to_vec());
        coalesced.add(&turn_job, &budget, false);
        coalesced.add(&summary, &budget, true);
        for event in tool_events {
            let one = material(
                JobType::Observations,
                turn,
                vec![prompt_event.clone(), event.clone()],
            );
            per_event.add(&one, &budget, false);
        }
        per_event.add(&summary, &budget, true);
    }

    let tool_events: usize = tool_counts.values().sum();
    let per_100 = |tokens: usize| tokens as f64 * 100.0 / tool_events as f64;
    let mix: Vec<String> = tool_counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
    println!(
        "session: {} turns, {tool_events} tool events ({}), {} KB of hook JSON",
        TURNS.len(),
        mix.join(", "),
        hook_bytes / 1024
    );
    println!(
        "{:<20} {:>6} {:>13} {:>14} {:>20} {:>10} {:>12}",
        "", "calls", "input tokens", "per 100 tools", "system (cacheable)", "user part", "over budget"
    );
    for (name, t) in [
        ("coalesced (Cairn)", &coalesced),
        ("one call per event", &per_event),
    ] {
        let system = format!(
            "{} ({:.0}%)",
            t.system_tokens,
            t.system_tokens as f64 * 100.0 / t.total() as f64
        );
        println!(
            "{name:<20} {:>6} {:>13} {:>14.0} {system:>20} {:>10} {:>12}",
            t.calls,
            t.total(),
            per_100(t.total()),
            t.user_tokens,
            t.over_budget,
        );
    }
    let ratio = |a: usize, b: usize| a as f64 / b as f64;
    println!(
        "prompt_tokens tool_events={tool_events} coalesced={} per_event={} coalesced_per_100={:.0} \
         per_event_per_100={:.0} ratio={:.2} obs_only_ratio={:.2} user_part_ratio={:.2} coalesced_system={} \
         coalesced_system_pct={:.0} coalesced_over_budget={}",
        coalesced.total(),
        per_event.total(),
        per_100(coalesced.total()),
        per_100(per_event.total()),
        ratio(per_event.total(), coalesced.total()),
        ratio(per_event.observation_tokens, coalesced.observation_tokens),
        ratio(per_event.user_tokens, coalesced.user_tokens),
        coalesced.system_tokens,
        coalesced.system_tokens as f64 * 100.0 / coalesced.total() as f64,
        coalesced.over_budget,
    );
    Ok(())
}

/// Input tokens of a series of provider calls.
#[derive(Default)]
struct Tally {
    calls: usize,
    /// The system prompts: the same text on every call of a kind.
    system_tokens: usize,
    user_tokens: usize,
    /// System + user tokens of observation calls only (no summaries).
    observation_tokens: usize,
    /// Calls whose events did not all fit `Budget::total_chars` (some were left out).
    over_budget: usize,
}

impl Tally {
    fn add(&mut self, material: &Material, budget: &Budget, summary: bool) {
        let built = prompt::build(material, budget);
        let (system, user) = (
            prompt::estimate_tokens(built.system),
            prompt::estimate_tokens(&built.user),
        );
        self.calls += 1;
        self.system_tokens += system;
        self.user_tokens += user;
        self.over_budget += usize::from(built.user.contains("left out to fit the budget"));
        if !summary {
            self.observation_tokens += system + user;
        }
    }

    fn total(&self) -> usize {
        self.system_tokens + self.user_tokens
    }
}

fn material(job_type: JobType, turn: i32, events: Vec<EventRecord>) -> Material {
    Material {
        job_id: Uuid::nil(),
        job_type,
        project: "cairn".into(),
        agent: Some("claude-code".into()),
        cwd: Some(ROOT.into()),
        prompt_number: Some(turn),
        events,
    }
}

/// The events of turn `index` (its prompt, its tool calls, its Stop) as the
/// ingest path stores them: the whole hook JSON as payload, numbered.
fn session_turn(index: usize) -> Vec<EventRecord> {
    let at = Utc.timestamp_opt(1_700_000_000 + index as i64 * 600, 0).unwrap();
    workload::single_session_turn(index, SESSION)
        .into_iter()
        .enumerate()
        .map(|(i, body)| EventRecord {
            event_type: body["hook_event_name"].as_str().unwrap_or_default().into(),
            tool_name: body["tool_name"].as_str().map(str::to_string),
            prompt_number: Some(index as i32 + 1),
            occurred_at: at + chrono::Duration::seconds(i as i64 * 7),
            payload: body,
        })
        .collect()
}
