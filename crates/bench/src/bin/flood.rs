//! flood: what a flood and slow clients cost a running `cairn-api` (started
//! by bench/floods.sh, or any API given `--url` and `--pid`).
//!
//! - `bad_token`: `--concurrency` clients send `GET /v1/info` with one
//!   garbage bearer token as fast as they can for `--seconds`; prints the
//!   answers by status and the rate of answers that were not 429 (what one
//!   bad token gets through before the limiter).
//! - `slow_clients`: opens `--slow` connections that each send the headers of
//!   a 2 MB `POST /v1/events` and then half of its body, and hold; prints the
//!   API's RSS before, with all of them holding, and after they are dropped,
//!   and how many got an answer (408/503) while holding.

use std::{collections::BTreeMap, time::Duration};

use clap::Parser;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    time::Instant,
};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    url: String,
    #[arg(long)]
    token: String,
    /// The API's pid, to read its RSS from /proc.
    #[arg(long)]
    pid: u32,
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    #[arg(long, default_value_t = 400)]
    slow: usize,
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn bad_token(args: &Args) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut tasks = vec![];
    for _ in 0..args.concurrency {
        let client = client.clone();
        let url = format!("{}/v1/info", args.url);
        tasks.push(tokio::spawn(async move {
            let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
            while Instant::now() < deadline {
                if let Ok(res) = client.get(&url).bearer_auth("not-a-real-token").send().await {
                    *counts.entry(res.status().as_u16()).or_default() += 1;
                }
            }
            counts
        }));
    }
    let mut total: BTreeMap<u16, u64> = BTreeMap::new();
    for t in tasks {
        for (k, v) in t.await? {
            *total.entry(k).or_default() += v;
        }
    }
    let all: u64 = total.values().sum();
    let passed: u64 = total.iter().filter(|(k, _)| **k != 429).map(|(_, v)| v).sum();
    let secs = args.seconds as f64;
    println!(
        "bad_token seconds={} requests_per_s={:.0} not_429_per_s={:.1} by_status={:?}",
        args.seconds,
        all as f64 / secs,
        passed as f64 / secs,
        total
    );
    Ok(())
}

async fn slow_clients(args: &Args) -> anyhow::Result<()> {
    let addr = args.url.trim_start_matches("http://").to_string();
    let before = rss_kb(args.pid);
    let half = vec![b'a'; 1024 * 1024];
    let mut conns = vec![];
    for _ in 0..args.slow {
        let Ok(mut s) = TcpStream::connect(&addr).await else {
            continue;
        };
        let head = format!(
            "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n",
            args.token
        );
        if s.write_all(head.as_bytes()).await.is_err() {
            continue;
        }
        // The server may stop reading (budget spent): don't wait on it.
        let _ = tokio::time::timeout(Duration::from_millis(50), s.write_all(&half)).await;
        conns.push(s);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let holding = rss_kb(args.pid);
    let mut answered = 0;
    for s in &mut conns {
        let mut buf = [0u8; 16];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(5), s.read(&mut buf)).await
            && n > 0
        {
            answered += 1;
        }
    }
    let opened = conns.len();
    drop(conns);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = rss_kb(args.pid);
    println!(
        "slow_clients opened={opened} answered_while_holding={answered} rss_before_kb={before} rss_holding_kb={holding} rss_after_kb={after}"
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    bad_token(&args).await?;
    slow_clients(&args).await
}
