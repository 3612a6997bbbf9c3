//! `openapi/openapi.json` is generated from the handlers and committed; this
//! test fails when it drifts. Regenerate with
//! `CAIRN_UPDATE_OPENAPI=1 cargo test -p cairn-api --test openapi`.
//! The committed document passes `openapi-spec-validator` and `redocly lint`
//! (installed by scripts/tools/openapi-tools.sh), and every operation, present
//! or added later, says what a client generator needs (the tests below).

use std::{path::PathBuf, process::Command};

use serde_json::Value;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../openapi/openapi.json")
}

fn spec() -> Value {
    serde_json::from_str(&cairn_api::routes::openapi().to_json().unwrap()).unwrap()
}

/// Every operation: (method, path, operation).
fn operations(spec: &Value) -> Vec<(String, String, Value)> {
    let mut out = vec![];
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op.get("responses").is_some() {
                out.push((method.clone(), path.clone(), op.clone()));
            }
        }
    }
    out
}

/// A response, with a `$ref` to `#/components/responses/…` followed.
fn resolve<'a>(spec: &'a Value, response: &'a Value) -> &'a Value {
    match response.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r
                .strip_prefix("#/components/responses/")
                .expect("a response $ref");
            &spec["components"]["responses"][name]
        }
        None => response,
    }
}

/// A tool scripts/tools/openapi-tools.sh installs; the test fails (it does not
/// skip) when it is missing.
fn tool(relative: &str) -> PathBuf {
    let home = std::env::var("HOME").expect("HOME");
    let path = PathBuf::from(home).join(".cache/cairn-tools").join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/tools/openapi-tools.sh",
        path.display()
    );
    path
}

#[test]
fn committed_openapi_matches_the_code() {
    let generated = cairn_api::routes::openapi().to_pretty_json().unwrap() + "\n";
    let path = committed_path();
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

#[test]
fn openapi_spec_validator_accepts_the_committed_document() {
    let out = Command::new(tool("openapi/bin/openapi-spec-validator"))
        .arg(committed_path())
        .output()
        .expect("run openapi-spec-validator");
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("OK"),
        "openapi-spec-validator: {text}"
    );
}

#[test]
fn redocly_lint_finds_no_error_in_the_committed_document() {
    let out = Command::new(tool("node/node_modules/.bin/redocly"))
        .args(["lint", "--format=summary"])
        .arg(committed_path())
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
        .output()
        .expect("run redocly lint");
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    // `--format=summary` lists each rule that fired with its severity.
    assert!(
        out.status.success() && !text.lines().any(|l| l.trim_start().starts_with("error ")),
        "redocly lint: {text}"
    );
    assert!(text.contains("validating"), "redocly did not lint: {text}");
}

/// Every operation that takes a credential declares 401, 403 and 429 with the
/// error body, and accepts both `Authorization: Bearer` and `X-Api-Key`; every
/// operation declares 429 (the per-address limit). A route added later that
/// bypassed `routes::complete` would fail here.
#[test]
fn every_secured_operation_declares_its_credentials_and_errors() {
    let spec = spec();
    let schemes = &spec["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["type"], "http");
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["apiKey"]["type"], "apiKey");
    assert_eq!(schemes["apiKey"]["in"], "header");
    assert_eq!(schemes["apiKey"]["name"], "X-Api-Key");
    let mut wrong = vec![];
    let mut secured = 0;
    for (method, path, op) in operations(&spec) {
        let security = op["security"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path}: no security"));
        let names: Vec<&str> = security
            .iter()
            .flat_map(|r| r.as_object().unwrap().keys().map(String::as_str))
            .collect();
        let statuses: &[&str] = if names.is_empty() {
            &["429"]
        } else {
            secured += 1;
            if !(names.contains(&"bearer") && names.contains(&"apiKey")) {
                wrong.push(format!("{method} {path}: security {names:?}"));
            }
            &["401", "403", "429"]
        };
        for status in statuses {
            let declared = &op["responses"][*status];
            let response = resolve(&spec, declared);
            let schema = &response["content"]["application/json"]["schema"]["$ref"];
            if declared.is_null() || schema != "#/components/schemas/ErrorBody" {
                wrong.push(format!("{method} {path}: {status} is {declared}"));
            }
        }
    }
    assert!(secured > 30, "only {secured} secured operations");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A path naming a resource can answer 404, a JSON body 422, and every
/// `$ref` points at something that exists.
#[test]
fn input_errors_are_declared_where_they_occur() {
    let spec = spec();
    let mut wrong = vec![];
    for (method, path, op) in operations(&spec) {
        let has = |s: &str| !op["responses"][s].is_null();
        if path.contains('{') && !has("404") {
            wrong.push(format!("{method} {path}: no 404"));
        }
        if !op["requestBody"]["content"]["application/json"].is_null() && !has("422") {
            wrong.push(format!("{method} {path}: no 422"));
        }
        for (status, response) in op["responses"].as_object().unwrap() {
            if resolve(&spec, response)["description"]
                .as_str()
                .is_none_or(str::is_empty)
            {
                wrong.push(format!("{method} {path}: {status} resolves to nothing"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let servers = spec["servers"].as_array().expect("servers");
    assert!(!servers.is_empty() && servers[0]["url"].is_string());
}

/// The hook route's input and output are real schemas with the agents' known
/// fields, not bare objects.
#[test]
fn the_hook_route_documents_the_agents_hook_json() {
    let spec = spec();
    let op = &spec["paths"]["/v1/hooks/{agent}"]["post"];
    assert_eq!(
        op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/HookInput"
    );
    assert_eq!(
        op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/HookOutput"
    );
    let input = &spec["components"]["schemas"]["HookInput"]["properties"];
    for field in [
        "session_id",
        "hook_event_name",
        "cwd",
        "prompt",
        "tool_name",
        "conversation_id",
        "workspace_roots",
        "trajectory_id",
        "agent_action_name",
    ] {
        assert!(input.get(field).is_some(), "HookInput lacks {field}");
    }
    let output = &spec["components"]["schemas"]["HookOutput"]["properties"];
    for field in ["hookSpecificOutput", "additional_context", "memoryMarkdown"] {
        assert!(output.get(field).is_some(), "HookOutput lacks {field}");
    }
}

/// The routes that can answer Markdown declare `text/markdown` beside JSON.
#[test]
fn markdown_is_declared_where_it_is_served() {
    let spec = spec();
    let content = &spec["paths"]["/v1/projects/{id}/context"]["get"]["responses"]["200"]["content"];
    assert!(content.get("application/json").is_some(), "{content}");
    assert!(content.get("text/markdown").is_some(), "{content}");
}
