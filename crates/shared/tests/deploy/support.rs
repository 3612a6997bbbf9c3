//! Reading the repository's files and running deploy/check.py.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::Duration,
};

use serde_norway::Value;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn read(relative: &str) -> String {
    let path = root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A YAML file with its `<<:` merge keys applied, as Compose applies them.
pub fn yaml(relative: &str) -> Value {
    let mut value: Value =
        serde_norway::from_str(&read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"));
    value.apply_merge().unwrap_or_else(|e| panic!("{relative}: {e}"));
    value
}

/// `value[a][b]…`, panicking with the path when a step is missing.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    let mut current = value;
    for (i, key) in path.iter().enumerate() {
        current = current
            .get(*key)
            .unwrap_or_else(|| panic!("missing {}", path[..=i].join(".")));
    }
    current
}

pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    at(value, path)
        .as_str()
        .unwrap_or_else(|| panic!("{} is not a string", path.join(".")))
}

/// A default in milliseconds read through `millis(env, "NAME", default)` in
/// a config source file: the figure the deployment's grace periods must beat.
pub fn millis_default(source: &str, name: &str) -> Duration {
    let needle = format!("\"{name}\",");
    let start = source
        .find(&needle)
        .unwrap_or_else(|| panic!("{name} is no longer read with a default: update the deploy test"))
        + needle.len();
    let digits: String = source[start..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    Duration::from_millis(
        digits
            .parse()
            .unwrap_or_else(|_| panic!("{name}'s default is not a literal")),
    )
}

/// Compose's duration strings such as `75s` or `1m30s`.
pub fn compose_duration(text: &str) -> Duration {
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        match c {
            '0'..='9' => number.push(c),
            's' | 'm' | 'h' => {
                let n: u64 = number.parse().unwrap_or_else(|_| panic!("duration {text:?}"));
                total += n * match c {
                    's' => 1,
                    'm' => 60,
                    _ => 3600,
                };
                number.clear();
            }
            _ => panic!("unexpected duration {text:?}"),
        }
    }
    assert!(number.is_empty(), "duration {text:?} lacks a unit");
    Duration::from_secs(total)
}

/// What deploy/check.py printed: it has linted, rendered and validated the
/// chart, checked the compose file and parsed the Dockerfile.
pub struct Checked {
    pub renders: serde_json::Value,
    pub dockerfile: Vec<(String, Vec<String>, Vec<String>)>,
}

pub fn checked() -> &'static Checked {
    static CHECKED: OnceLock<Checked> = OnceLock::new();
    CHECKED.get_or_init(run_check)
}

fn run_check() -> Checked {
    let python = std::env::var_os("CAIRN_DEPLOY_TOOLS_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/cairn-tools/helm/bin/python"))
        })
        .expect("HOME");
    assert!(
        python.exists(),
        "{} is missing: run scripts/tools/helm.sh (scripts/test.sh does)",
        python.display()
    );
    let out = Command::new(&python)
        .arg(root().join("deploy/check.py"))
        .arg(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "deploy/check.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dockerfile = report["dockerfile"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            let strings = |v: &serde_json::Value| -> Vec<String> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            };
            (
                line[0].as_str().unwrap().to_ascii_uppercase(),
                strings(&line[1]),
                strings(&line[2]),
            )
        })
        .collect();
    Checked {
        renders: report["renders"].clone(),
        dockerfile,
    }
}
