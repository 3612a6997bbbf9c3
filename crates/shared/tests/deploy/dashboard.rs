//! The shipped Grafana dashboard and its provisioning.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{read, str_at, yaml};

fn dashboard() -> Value {
    serde_json::from_str(&read("deploy/grafana/dashboards/cairn.json")).unwrap()
}

/// Every panel's query, and the chart's KEDA Prometheus query with them.
fn expressions(dashboard: &Value) -> Vec<String> {
    let values = yaml("deploy/helm/cairn/values.yaml");
    let keda = str_at(&values, &["generator", "keda", "prometheus", "query"]).to_string();
    dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .chain([keda])
        .collect()
}

/// The metric names the dashboard queries (histograms by their base name).
fn metric_names(dashboard: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for expr in expressions(dashboard) {
        for (i, _) in expr.match_indices("cairn_") {
            let name: String = expr[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(&name);
            names.insert(base.to_string());
        }
    }
    names
}

#[test]
fn every_panel_query_is_valid_promql() {
    let dashboard = dashboard();
    let exprs = expressions(&dashboard);
    assert!(exprs.len() >= 12, "{} queries", exprs.len());
    for expr in exprs {
        // Grafana replaces $__rate_interval before Prometheus sees the query.
        let promql = expr.replace("$__rate_interval", "1m");
        promql_parser::parser::parse(&promql).unwrap_or_else(|e| panic!("{expr}: {e}"));
    }
}

#[test]
fn the_dashboard_covers_requests_ingest_jobs_queue_and_providers() {
    let names = metric_names(&dashboard());
    for needed in [
        "cairn_http_requests_total",
        "cairn_http_request_duration_seconds",
        "cairn_ingest_events_total",
        "cairn_queue_jobs",
        "cairn_queue_oldest_due_seconds",
        "cairn_job_transitions_total",
        "cairn_job_claim_to_complete_seconds",
        "cairn_provider_tokens_total",
        "cairn_provider_calls_total",
        "cairn_ingest_replayed_events_total",
        "cairn_db_pool_connections",
    ] {
        assert!(names.contains(needed), "no panel reads {needed}");
    }
}

#[test]
fn the_panels_use_the_provisioned_datasource() {
    let provisioned = yaml("deploy/grafana/provisioning/datasources/prometheus.yml");
    let uid = str_at(&provisioned["datasources"][0], &["uid"]).to_string();
    let dashboard = dashboard();
    for panel in dashboard["panels"].as_array().unwrap() {
        if panel["type"] == "row" {
            continue;
        }
        assert_eq!(panel["datasource"]["uid"], uid.as_str(), "{}", panel["title"]);
        assert!(
            panel["targets"].as_array().is_some_and(|t| !t.is_empty()),
            "{}",
            panel["title"]
        );
    }
    let provider = yaml("deploy/grafana/provisioning/dashboards/cairn.yml");
    assert_eq!(
        str_at(&provider["providers"][0], &["options", "path"]),
        "/var/lib/grafana/dashboards"
    );
}

/// The metric names crates/telemetry defines (string literals `"cairn_…"`).
fn exported_metric_names() -> BTreeSet<String> {
    fn walk(dir: &std::path::Path, out: &mut BTreeSet<String>, literal: &regex::Regex) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for path in entries.map(|e| e.unwrap().path()) {
            if path.is_dir() {
                walk(&path, out, literal);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.extend(literal.captures_iter(&text).map(|c| c[1].to_string()));
            }
        }
    }
    let literal = regex::Regex::new(r#""(cairn_[a-z0-9_]+)""#).unwrap();
    let mut names = BTreeSet::new();
    walk(
        &crate::support::root().join("crates/telemetry/src"),
        &mut names,
        &literal,
    );
    names
}

/// Until crates/telemetry names its metrics this has nothing to compare
/// and says so; from then on a dashboard query on a name the services do
/// not export fails here.
#[test]
fn the_dashboard_reads_metrics_the_services_export() {
    let exported = exported_metric_names();
    if exported.is_empty() {
        eprintln!("crates/telemetry defines no cairn_* metric names yet: dashboard names unchecked");
        return;
    }
    let missing: Vec<String> = metric_names(&dashboard())
        .into_iter()
        .filter(|name| !exported.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "deploy/grafana/dashboards/cairn.json (and the chart's KEDA prometheus query) read {missing:?}, \
         which crates/telemetry does not define; it defines {exported:?}"
    );
}
