//! `cairn-core` is the engine without its transports: neither it nor any
//! workspace crate it depends on pulls in axum (HTTP), apalis or redis
//! (wake-ups) — except as an optional feature it does not turn on.

use std::{collections::BTreeSet, path::Path};

const TRANSPORTS: [&str; 4] = ["axum", "apalis", "apalis-redis", "redis"];

/// The `[dependencies]` section's (name, line) pairs of a manifest.
fn dependencies(manifest: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && let Some((name, rest)) = line.split_once('=') {
            let name = name.trim().trim_end_matches(".workspace").trim_matches('"');
            out.push((name.to_string(), rest.trim().to_string()));
        }
    }
    out
}

#[test]
fn the_engine_links_no_transport() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut todo = vec!["cairn-core".to_string()];
    let mut seen = BTreeSet::new();
    while let Some(krate) = todo.pop() {
        if !seen.insert(krate.clone()) {
            continue;
        }
        let path = workspace
            .lines()
            .find(|l| l.starts_with(&format!("{krate} = {{ path = ")))
            .and_then(|l| l.split('"').nth(1))
            .unwrap_or_else(|| panic!("{krate} is not a workspace path dependency"));
        let manifest = std::fs::read_to_string(root.join(path).join("Cargo.toml")).unwrap();
        for (name, spec) in dependencies(&manifest) {
            assert!(
                !TRANSPORTS.contains(&name.as_str()) || spec.contains("optional = true"),
                "{krate} depends on {name}: the engine must not link a transport"
            );
            if name.starts_with("cairn-") {
                todo.push(name);
            }
        }
    }
    assert!(seen.len() >= 5, "walked {seen:?}");
}
