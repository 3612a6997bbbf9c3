//! `openapi/openapi.json` is generated from the handlers and committed; this
//! test fails when it drifts. Regenerate with
//! `CAIRN_UPDATE_OPENAPI=1 cargo test -p cairn-api --test openapi`.

use std::path::PathBuf;

#[test]
fn committed_openapi_matches_the_code() {
    let generated = cairn_api::routes::openapi().to_pretty_json().unwrap() + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../openapi/openapi.json");
    if std::env::var("CAIRN_UPDATE_OPENAPI").is_ok() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is out of date; run CAIRN_UPDATE_OPENAPI=1 cargo test -p cairn-api --test openapi"
    );
}

#[test]
fn every_claude_mem_route_is_documented() {
    let spec = cairn_api::routes::openapi();
    for path in [
        "/healthz",
        "/api/readiness",
        "/api/health",
        "/v1/info",
        "/v1/sessions/start",
        "/v1/sessions/{id}",
        "/v1/sessions/{id}/end",
        "/v1/events",
        "/v1/events/batch",
        "/v1/events/{id}",
        "/v1/events/{id}/observations",
        "/v1/jobs",
        "/v1/jobs/{id}",
        "/v1/jobs/{id}/retry",
        "/v1/jobs/{id}/cancel",
        "/v1/memories",
        "/v1/memories/{id}",
        "/v1/projects/{projectId}/memory",
        "/v1/hooks/{agent}",
    ] {
        assert!(
            spec.paths.paths.contains_key(path),
            "{path} missing from the OpenAPI document"
        );
    }
}

/// OpenAPI requires a `description` on every response; without one,
/// validators and client generators refuse the document.
#[test]
fn every_response_has_a_description() {
    let spec: serde_json::Value =
        serde_json::from_str(&cairn_api::routes::openapi().to_json().unwrap()).unwrap();
    let mut missing = vec![];
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().into_iter().flatten() {
                if response.get("$ref").is_none()
                    && response["description"].as_str().is_none_or(str::is_empty)
                {
                    missing.push(format!("{method} {path} {status}"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "responses without a description: {missing:?}");
}
