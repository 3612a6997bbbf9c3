//! Structural tests of the deployment files (docker-compose.yml, the
//! Dockerfile, the Helm chart, Prometheus and Grafana), and the checks of
//! deploy/check.py with the real tools (Helm's SDK, kubernetes-validate, the
//! Compose spec schema, BuildKit's Dockerfile parser) that
//! scripts/tools/helm.sh installs.

#[path = "deploy/chart.rs"]
mod chart;
#[path = "deploy/compose.rs"]
mod compose;
#[path = "deploy/dashboard.rs"]
mod dashboard;
#[path = "deploy/rendered.rs"]
mod rendered;
#[path = "deploy/support.rs"]
mod support;
