//! The Helm chart's sources: every value a template reads is declared in
//! values.yaml and in values.schema.json, and the templates hold what a
//! deployment that survives needs.

use std::collections::BTreeSet;

use serde_norway::Value;

use crate::support::{read, root, yaml};

const CHART: &str = "deploy/helm/cairn";

fn templates() -> Vec<(String, String)> {
    let dir = root().join(CHART).join("templates");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `.Values.a.b` paths in a template, plus the paths read inside
/// `{{- with .Values.x }}` blocks as `.y` (resolved to `x.y`).
fn values_paths(template: &str) -> BTreeSet<Vec<String>> {
    let ident = |s: &str| -> Vec<String> {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .unwrap_or(s.len());
        s[..end]
            .trim_end_matches('.')
            .split('.')
            .map(str::to_string)
            .collect()
    };
    let mut paths = BTreeSet::new();
    for (i, _) in template.match_indices(".Values.") {
        paths.insert(ident(&template[i + ".Values.".len()..]));
    }
    // One level of `with`: a block whose dot is a values map.
    if let Some(start) = template.find("{{- with .Values.") {
        let base = ident(&template[start + "{{- with .Values.".len()..]);
        let block = &template[start..];
        for (i, _) in block
            .match_indices("{{ .")
            .chain(block.match_indices("if ."))
            .chain(block.match_indices("eq ."))
        {
            let after = &block[i..];
            let dot = after.find('.').unwrap();
            let rest = &after[dot + 1..];
            if rest.starts_with("Values")
                || rest.starts_with("Release")
                || !rest.starts_with(|c: char| c.is_ascii_lowercase())
            {
                continue;
            }
            let mut path = base.clone();
            path.extend(ident(rest));
            paths.insert(path);
        }
    }
    paths
}

fn lookup<'a>(values: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(values, |v, key| v.get(key.as_str()))
}

fn schema_declares(schema: &serde_json::Value, path: &[String]) -> bool {
    let mut node = schema;
    for key in path {
        match node.get("properties").and_then(|p| p.get(key)) {
            Some(next) => node = next,
            // An open object (resources, annotations) declares what is under it.
            None => {
                return node.get("type") == Some(&serde_json::json!("object"))
                    && node.get("properties").is_none();
            }
        }
    }
    true
}

#[test]
fn every_value_a_template_reads_is_declared() {
    let values = yaml(&format!("{CHART}/values.yaml"));
    let schema: serde_json::Value =
        serde_json::from_str(&read(&format!("{CHART}/values.schema.json"))).unwrap();
    let mut checked = 0;
    for (name, text) in templates() {
        for path in values_paths(&text) {
            assert!(
                lookup(&values, &path).is_some(),
                "{name} reads .Values.{} which values.yaml lacks",
                path.join(".")
            );
            assert!(
                schema_declares(&schema, &path),
                "{name}: .Values.{} is not in values.schema.json",
                path.join(".")
            );
            checked += 1;
        }
    }
    assert!(
        checked > 60,
        "only {checked} value paths found: the scanner is broken"
    );
}

#[test]
fn every_value_in_values_yaml_is_in_the_schema() {
    fn walk(value: &Value, schema: &serde_json::Value, path: &mut Vec<String>) {
        let Some(map) = value.as_mapping() else { return };
        for (key, child) in map {
            path.push(key.as_str().unwrap().to_string());
            assert!(
                schema_declares(schema, path),
                "values.yaml has {} which the schema lacks",
                path.join(".")
            );
            if let Some(next) = schema.pointer(&format!("/properties/{}", path.join("/properties/")))
                && next.get("properties").is_some()
            {
                walk(child, schema, &mut path.clone());
            }
            path.pop();
        }
    }
    let values = yaml(&format!("{CHART}/values.yaml"));
    let schema: serde_json::Value =
        serde_json::from_str(&read(&format!("{CHART}/values.schema.json"))).unwrap();
    walk(&values, &schema, &mut Vec::new());
    assert_eq!(
        schema["additionalProperties"],
        serde_json::json!(false),
        "misspelt top-level keys are refused"
    );
}

#[test]
fn the_templates_hold_the_kinds_probes_and_hooks() {
    let all: String = templates().into_iter().map(|(_, t)| t).collect();
    for kind in [
        "kind: Deployment",
        "kind: Service",
        "kind: Ingress",
        "kind: Job",
        "kind: Secret",
        "kind: PodDisruptionBudget",
        "kind: ScaledObject",
        "kind: TriggerAuthentication",
    ] {
        assert!(all.contains(kind), "no {kind}");
    }
    for needle in [
        "path: /healthz",
        "path: /api/readiness",
        r#"command: ["cairn-generator", "health"]"#,
        r#"command: ["cairn", "admin", "migrate"]"#,
        r#""helm.sh/hook": pre-install,pre-upgrade"#,
        "readOnlyRootFilesystem",
        "existingSecret",
    ] {
        assert!(
            all.contains(needle) || read(&format!("{CHART}/values.yaml")).contains(needle),
            "no {needle}"
        );
    }
    let helpers = read(&format!("{CHART}/templates/_helpers.tpl"));
    assert!(helpers.contains("define \"cairn.fullname\""));
}

#[test]
fn the_migration_command_is_one_the_cli_has() {
    let admin = read("crates/cli/src/admin.rs");
    assert!(
        admin.contains("Migrate,"),
        "cairn admin migrate is gone: update the chart's Job"
    );
    let routes = read("services/api/src/routes/health.rs");
    for path in ["\"/healthz\"", "\"/api/readiness\""] {
        assert!(
            routes.contains(path),
            "the API no longer serves {path}: update the probes"
        );
    }
}
