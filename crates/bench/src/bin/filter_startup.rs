//! What the privacy filter costs a process that lives for one event (`cairn
//! hook`): building it, then filtering one typical hook payload, measured
//! cold in each of `--runs` fresh builds (p50/p90/p99/max in ms), beside a
//! fully compiled filter (`warm`, what the API does at start) for reference.

use std::time::Instant;

use cairn_shared::privacy::{PrivacyConfig, PrivacyFilter};
use clap::Parser;
use serde_json::json;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 200)]
    runs: usize,
}

fn payload() -> serde_json::Value {
    json!({
        "session_id": "8f3c2b1e-5d4a-4e9f-9c0b-7a6e2d1f3b4c",
        "hook_event_name": "PostToolUse",
        "cwd": "/home/dev/acme-api",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01ABC",
        "tool_input": {"command": "RUST_LOG=debug cargo test login -- --nocapture", "description": "run tests"},
        "tool_response": {"stdout": "running 3 tests\ntest auth::login ... FAILED\n".repeat(30), "stderr": "", "interrupted": false}
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{name:<28} p50 {:>6.2}  p90 {:>6.2}  p99 {:>6.2}  max {:>6.2}",
        percentile(&ms, 0.5),
        percentile(&ms, 0.9),
        percentile(&ms, 0.99),
        ms[ms.len() - 1]
    );
}

fn main() {
    let args = Args::parse();
    let (mut build, mut first_filter, mut warm_build) = (vec![], vec![], vec![]);
    for _ in 0..args.runs {
        let start = Instant::now();
        let filter = PrivacyFilter::new(PrivacyConfig::default());
        build.push(start.elapsed().as_secs_f64() * 1e3);
        let mut value = payload();
        let start = Instant::now();
        filter.filter_value(&mut value);
        first_filter.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        PrivacyFilter::new(PrivacyConfig::default()).warm();
        warm_build.push(start.elapsed().as_secs_f64() * 1e3);
    }
    println!("privacy filter, {} runs (ms):", args.runs);
    report("build (lazy rules)", build);
    report("first filter of a payload", first_filter);
    report("build + warm (every rule)", warm_build);
}
