//! How often the privacy filter redacts ordinary source code: runs the filter
//! over every `*.rs` file of this repository, then of the vendored crates
//! under `~/.cargo/registry/src`, up to `--max-mb`, and prints the bytes
//! scanned and the filter's throughput, the redactions per kind, the slowest
//! files, and sample lines of one kind (`--sample-kind`, by default
//! `high_entropy`). Code is not secret, so nearly every redaction here is a
//! false positive, except the fake keys of test fixtures, which the samples
//! show.
//!
//! `cargo run -p cairn-bench --bin redact_false_positives -- --max-mb 1024`
//! (`--ext md,toml,json,yml,sh,py` for other text, `--root DIR` for another tree)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cairn_shared::privacy::{PrivacyConfig, PrivacyFilter};
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Stop after this many megabytes of source.
    #[arg(long, default_value_t = 64)]
    max_mb: usize,
    /// File name endings scanned, comma-separated.
    #[arg(long, default_value = "rs")]
    ext: String,
    /// Kind whose redacted lines are printed.
    #[arg(long, default_value = "high_entropy")]
    sample_kind: String,
    /// How many sample lines to print.
    #[arg(long, default_value_t = 40)]
    samples: usize,
    /// Directories to scan instead of the repository and the cargo registry.
    #[arg(long)]
    root: Vec<PathBuf>,
}

/// How many of the slowest files are named.
const SLOWEST: usize = 5;

/// Longest sample line printed, in characters.
const SAMPLE_CHARS: usize = 160;

fn default_roots() -> Vec<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap_or(repo);
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let mut roots = vec![repo];
    roots.extend(cargo_home.map(|h| h.join("registry/src")));
    roots
}

/// Files under `dir` with one of `exts`, sorted, skipping hidden and `target` directories.
fn collect(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            collect(&path, exts, out);
        } else if exts.iter().any(|e| name.ends_with(&format!(".{e}"))) {
            out.push(path);
        }
    }
}

fn main() {
    let args = Args::parse();
    let exts: Vec<&str> = args
        .ext
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    let roots = if args.root.is_empty() {
        default_roots()
    } else {
        args.root.clone()
    };
    let filter = PrivacyFilter::new(PrivacyConfig {
        max_field_bytes: usize::MAX,
        ..PrivacyConfig::default()
    });
    filter.warm();
    let budget = args.max_mb * 1024 * 1024;
    let (mut bytes, mut files, mut files_hit) = (0usize, 0usize, 0usize);
    let mut by_kind: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut samples: Vec<String> = Vec::new();
    let mut busy = std::time::Duration::ZERO;
    let mut slowest: Vec<(std::time::Duration, usize, PathBuf)> = Vec::new();
    'roots: for root in &roots {
        let mut paths = Vec::new();
        collect(root, &exts, &mut paths);
        for path in paths {
            if bytes >= budget {
                break 'roots;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            bytes += text.len();
            files += 1;
            let started = Instant::now();
            let (_, report) = filter.filter_text(&text);
            let took = started.elapsed();
            busy += took;
            slowest.push((took, text.len(), path.clone()));
            slowest.sort_by_key(|entry| std::cmp::Reverse(entry.0));
            slowest.truncate(SLOWEST);
            if report.redaction_count() == 0 {
                continue;
            }
            files_hit += 1;
            for (kind, n) in &report.redactions {
                *by_kind.entry(kind).or_default() += u64::from(*n);
            }
            if samples.len() < args.samples && report.redactions.contains_key(args.sample_kind.as_str()) {
                for (i, line) in text.lines().enumerate() {
                    let (_, line_report) = filter.filter_text(line);
                    if samples.len() < args.samples
                        && line_report.redactions.contains_key(args.sample_kind.as_str())
                    {
                        let shown: String = line.trim().chars().take(SAMPLE_CHARS).collect();
                        samples.push(format!("{}:{}: {shown}", path.display(), i + 1));
                    }
                }
            }
        }
    }
    let mb = bytes as f64 / (1024.0 * 1024.0);
    println!(
        "scanned {mb:.1} MB in {files} files ({:.1} MB/s in the filter); {files_hit} files had a redaction",
        mb / busy.as_secs_f64().max(1e-9)
    );
    for root in &roots {
        println!("  root: {}", root.display());
    }
    println!("redactions by kind:");
    if by_kind.is_empty() {
        println!("  (none)");
    }
    for (kind, n) in &by_kind {
        println!("  {kind:<24} {n:>6}  ({:.2} per MB)", *n as f64 / mb.max(1e-9));
    }
    println!("slowest files:");
    for (took, len, path) in &slowest {
        println!(
            "  {:>8.1} ms  {:>9} bytes  {}",
            took.as_secs_f64() * 1e3,
            len,
            path.display()
        );
    }
    println!("sample lines redacted as {}:", args.sample_kind);
    for line in &samples {
        println!("  {line}");
    }
}
