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

/// Every statement of the engine is in a store module (`src/store/`, one
/// per table or aggregate) or in one of the two lifecycles that own their
/// transitions (`memory/`, whose state moves write their `memory_changes`
/// row in the same statement, and `sessions/end.rs`); tests aside.
#[test]
fn statements_live_in_store_modules_and_lifecycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = |rel: &str| {
        rel.starts_with("store/")
            || rel.starts_with("memory/")
            || rel == "sessions/end.rs"
            || rel.ends_with("tests.rs")
    };
    let mut stray = vec![];
    let mut todo = vec![src.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap();
            let runs_sql = ["sqlx::query", "sqlx::raw_sql", "query_as(", "query_scalar("]
                .iter()
                .any(|call| text.contains(call));
            if runs_sql && !allowed(&rel) {
                stray.push(rel);
            }
        }
    }
    stray.sort();
    assert!(stray.is_empty(), "statements outside store modules: {stray:?}");
}
