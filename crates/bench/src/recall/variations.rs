//! The full profile's generated sessions: each of `variations.json`'s
//! projects gets `sessions_per_project` sessions, cycling through its
//! templates, with `{slot}` placeholders filled per session — numbers that
//! grow with the session's index (so each fact is unique) and words picked
//! from lists — deterministically.

use std::{collections::BTreeMap, path::Path};

use anyhow::Context;
use serde::Deserialize;
use serde_json::Value;

use super::data::{Dataset, Project, Session};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Variations {
    projects: Vec<Project>,
    sessions_per_project: usize,
    slots: BTreeMap<String, Slot>,
    /// Sessions without `id` and `project`; fact ids are prefixed with the session's.
    templates: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Slot {
    Number { from: i64, step: i64 },
    List(Vec<String>),
}

impl Slot {
    /// Lists of one length stay aligned (the `index`-th of each), so
    /// parallel lists can name pairs (a library and its alternative).
    fn value(&self, index: usize) -> String {
        match self {
            Slot::Number { from, step } => (from + step * index as i64).to_string(),
            Slot::List(items) => items.get(index % items.len().max(1)).cloned().unwrap_or_default(),
        }
    }
}

/// The generated sessions and their projects.
pub fn generate(path: &Path) -> anyhow::Result<Dataset> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Variations = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    anyhow::ensure!(!v.templates.is_empty(), "no templates in {}", path.display());
    let mut sessions = Vec::new();
    let mut index = 0;
    for project in &v.projects {
        for j in 0..v.sessions_per_project {
            let template = &v.templates[(index + project.slug.len()) % v.templates.len()];
            let id = format!("{}-{}", project.slug, j + 1);
            let mut value = fill(template, &|name| match name {
                "project" => Some(project.slug.clone()),
                _ => v.slots.get(name).map(|s| s.value(index)),
            });
            value["id"] = id.clone().into();
            value["project"] = project.slug.clone().into();
            if let Some(facts) = value["facts"].as_array_mut() {
                for fact in facts {
                    let local = fact["id"].as_str().unwrap_or("fact").to_string();
                    fact["id"] = format!("{id}-{local}").into();
                }
            }
            let session: Session =
                serde_json::from_value(value).with_context(|| format!("generated session {id}"))?;
            sessions.push(session);
            index += 1;
        }
    }
    Ok(Dataset {
        projects: v.projects,
        sessions,
    })
}

/// `value` with every `{name}` in its strings replaced where `slot` knows the name.
fn fill(value: &Value, slot: &dyn Fn(&str) -> Option<String>) -> Value {
    match value {
        Value::String(s) => Value::String(fill_text(s, slot)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, slot)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), fill(v, slot))).collect()),
        other => other.clone(),
    }
}

fn fill_text(text: &str, slot: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_end = after.find('}');
        match name_end.map(|end| (&after[..end], end)) {
            Some((name, end))
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() =>
            {
                match slot(name) {
                    Some(value) => out.push_str(&value),
                    None => out.push_str(&rest[open..open + end + 2]),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_others_kept() {
        let slot = |n: &str| (n == "mem").then(|| "1536".to_string());
        assert_eq!(
            fill_text("memory: {mem}Mi {x} { y }", &slot),
            "memory: 1536Mi {x} { y }"
        );
        assert_eq!(Slot::Number { from: 100, step: 7 }.value(3), "121");
        assert_eq!(Slot::List(vec!["a".into(), "b".into()]).value(3), "b");
    }
}
