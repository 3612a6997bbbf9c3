//! `cairn doctor`: one line per check, ✓ or ✗, and on ✗ what to do. Checks
//! the client config, that the server answers, the token and its scopes, the
//! project this directory resolves to, the spool backlog, and the hooks
//! installed for each agent. Synchronous (ureq), 2 s per request.

use std::{path::Path, time::Duration};

use serde_json::Value;

// The hook client's own repository discovery and query string, so doctor
// asks exactly what a hook sends.
use crate::{
    client_config::{ClientConfig, Env},
    hook::{git, query},
    install::{Scope, inspect},
    spool::Spool,
};

const TIMEOUT: Duration = Duration::from_secs(2);

/// The checks' results, printed as they come.
struct Report {
    healthy: bool,
}

impl Report {
    fn pass(&mut self, what: &str, detail: impl AsRef<str>) {
        println!("✓ {what}: {}", detail.as_ref());
    }

    fn fail(&mut self, what: &str, detail: impl AsRef<str>, advice: impl AsRef<str>) {
        self.healthy = false;
        println!("✗ {what}: {}\n    → {}", detail.as_ref(), advice.as_ref());
    }

    fn skip(&mut self, what: &str, why: &str) {
        println!("- {what}: skipped ({why})");
    }
}

/// Runs every check; true when all passed.
pub fn run(config: &ClientConfig, env: &dyn Env) -> anyhow::Result<bool> {
    let mut report = Report { healthy: true };
    let http: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("cairn-doctor/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();

    check_config(&mut report, config, env);
    let reachable = check_server(&mut report, &http, config);
    match (&config.token, reachable) {
        (None, _) => report.fail(
            "token",
            "none configured",
            "`cairn install <agent> --token <token>` (or set CAIRN_TOKEN)",
        ),
        (Some(_), false) => report.skip("token", "server unreachable"),
        (Some(token), true) => {
            if check_token(&mut report, &http, config, token) {
                check_project(&mut report, &http, config, token);
            } else {
                report.skip("project", "token refused");
            }
        }
    }
    if config.token.is_none() {
        report.skip("project", "no token");
    } else if !reachable {
        report.skip("project", "server unreachable");
    }
    check_spool(&mut report, config);
    check_hooks(&mut report, env)?;
    Ok(report.healthy)
}

fn check_config(report: &mut Report, config: &ClientConfig, env: &dyn Env) {
    let from_env = env.var("CAIRN_URL").is_some() || env.var("CAIRN_TOKEN").is_some();
    match &config.file {
        Some(path) => report.pass("config", format!("{} (url {})", tilde(path, env), config.url)),
        None if from_env => report.pass("config", format!("from the environment (url {})", config.url)),
        None => report.fail(
            "config",
            format!(
                "no config file, no CAIRN_URL/CAIRN_TOKEN (url defaults to {})",
                config.url
            ),
            "`cairn install <agent> --url <server> --token <token>`",
        ),
    }
}

fn check_server(report: &mut Report, http: &ureq::Agent, config: &ClientConfig) -> bool {
    let url = format!("{}/healthz", config.url);
    let started = std::time::Instant::now();
    match http.get(&url).call() {
        Ok(r) if r.status().is_success() => {
            report.pass(
                "server",
                format!("{} answers ({} ms)", config.url, started.elapsed().as_millis()),
            );
            true
        }
        Ok(r) => {
            report.fail(
                "server",
                format!("GET {url} answered {}", r.status().as_u16()),
                "check the server's logs; is the url Cairn's API?",
            );
            false
        }
        Err(e) => {
            report.fail(
                "server",
                format!("{} unreachable: {e}", config.url),
                "start the server, or point at it: `cairn install <agent> --url <server>` (or CAIRN_URL)",
            );
            false
        }
    }
}

/// `GET /v1/whoami`: the token's name, team, project and scopes.
fn check_token(report: &mut Report, http: &ureq::Agent, config: &ClientConfig, token: &str) -> bool {
    let url = format!("{}/v1/whoami", config.url);
    let (status, body) = match get_json(http, &url, token) {
        Ok(answer) => answer,
        Err(e) => {
            report.fail(
                "token",
                format!("GET /v1/whoami failed: {e}"),
                "run `cairn doctor` again",
            );
            return false;
        }
    };
    match status {
        200 => {
            let scopes: Vec<&str> = body["scopes"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let name = body["name"].as_str().unwrap_or("?");
            let project = body["projectId"]
                .as_str()
                .map(|p| format!(", project {p}"))
                .unwrap_or_default();
            let expires = body["expiresAtEpoch"]
                .as_i64()
                .map(|ms| format!(", expires {}", format_epoch(ms)))
                .unwrap_or_default();
            let member = body["member"]["email"]
                .as_str()
                .or(body["member"]["name"].as_str())
                .map(|m| format!(", member {m}"))
                .unwrap_or_default();
            let detail = format!("{name} (scopes: {}{project}{member}{expires})", scopes.join(", "));
            if scopes.contains(&"ingest") {
                report.pass("token", detail);
            } else {
                report.fail(
                    "token",
                    format!("{detail}: hooks need the `ingest` scope"),
                    "mint a token with the ingest scope (and read, for memory and MCP)",
                );
            }
            true
        }
        401 | 403 => {
            report.fail(
                "token",
                format!("refused ({status} {})", error_text(&body)),
                "the token is unknown, revoked or expired: mint a new one and `cairn install <agent> --token <token>`",
            );
            false
        }
        404 => {
            report.fail(
                "token",
                "the server has no /v1/whoami",
                "upgrade the Cairn server",
            );
            false
        }
        _ => {
            report.fail(
                "token",
                format!("GET /v1/whoami answered {status} {}", error_text(&body)),
                "check the server's logs",
            );
            false
        }
    }
}

/// `GET /v1/projects/resolve` with what a hook sent from this directory.
fn check_project(report: &mut Report, http: &ureq::Agent, config: &ClientConfig, token: &str) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let repo = git::discover(&cwd);
    let query = query::build(config.project.as_deref(), repo.as_ref(), &cwd, None, &[]);
    let url = format!("{}/v1/projects/resolve?{query}", config.url);
    match get_json(http, &url, token) {
        Ok((200, body)) => {
            let p = &body["project"];
            report.pass(
                "project",
                format!(
                    "{} ({}), matched by {}",
                    p["slug"].as_str().unwrap_or("?"),
                    p["id"].as_str().unwrap_or("?"),
                    body["matchedBy"].as_str().unwrap_or("?")
                ),
            );
        }
        Ok((404, body)) if body["error"]["code"] == "project_unresolved" => report.fail(
            "project",
            format!("none resolved for {}", cwd.display()),
            "`cairn install <agent> --project <slug>`, or have an admin map this repository's remote or path to a project",
        ),
        Ok((404, _)) => report.fail("project", "the server has no /v1/projects/resolve", "upgrade the Cairn server"),
        Ok((status, body)) => report.fail(
            "project",
            format!("GET /v1/projects/resolve answered {status} {}", error_text(&body)),
            "check the token's team and the server's logs",
        ),
        Err(e) => report.fail("project", format!("GET /v1/projects/resolve failed: {e}"), "run `cairn doctor` again"),
    }
}

fn check_spool(report: &mut Report, config: &ClientConfig) {
    let spool = Spool::for_config(config);
    let path = spool.path();
    if !path.exists() {
        report.pass("spool", "empty");
        return;
    }
    match spool.snapshot() {
        Ok(s) if s.entries.is_empty() => report.pass("spool", "empty"),
        Ok(s) => {
            let dropped = spool.dropped();
            let dropped = if dropped > 0 {
                format!(", {dropped} dropped when full")
            } else {
                String::new()
            };
            report.fail(
                "spool",
                format!(
                    "{} events waiting ({} bytes{dropped}) in {}",
                    s.entries.len(),
                    s.bytes,
                    path.display()
                ),
                "once the server and token check out: `cairn spool flush`",
            );
        }
        Err(e) => report.fail(
            "spool",
            format!("{}: {e}", path.display()),
            "check the file's permissions",
        ),
    }
}

fn check_hooks(report: &mut Report, env: &dyn Env) -> anyhow::Result<()> {
    let installed = inspect::installed(env)?;
    if installed.is_empty() {
        report.fail(
            "hooks",
            "no agent has Cairn's hooks here or in your home",
            "`cairn install <agent>`",
        );
    }
    for i in installed {
        let what = format!("hooks {} ({})", i.agent, i.scope.name());
        let again = match i.scope {
            Scope::Project => format!("`cairn install {}`", i.agent),
            Scope::User => format!("`cairn install {} --scope user`", i.agent),
        };
        let shown = tilde(&i.path, env);
        if !i.missing_programs.is_empty() {
            report.fail(
                &what,
                format!(
                    "{shown} runs {}, which is not there",
                    i.missing_programs.join(", ")
                ),
                format!("{again} to point the hooks at this cairn"),
            );
        } else if i.complete() {
            report.pass(&what, format!("{shown}, {} events", i.events.len()));
        } else {
            report.fail(
                &what,
                format!("{shown}: {} of {} events", i.events.len(), i.expected),
                again,
            );
        }
    }
    Ok(())
}

fn get_json(http: &ureq::Agent, url: &str, token: &str) -> Result<(u16, Value), ureq::Error> {
    let mut response = http
        .get(url)
        .header("authorization", &format!("Bearer {token}"))
        .call()?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .unwrap_or_default();
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// `code: message` of an `{"error": {...}}` body.
fn error_text(body: &Value) -> String {
    match (body["error"]["code"].as_str(), body["error"]["message"].as_str()) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c.to_string(),
        _ => String::new(),
    }
}

fn format_epoch(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| ms.to_string())
}

fn tilde(path: &Path, env: &dyn Env) -> String {
    match env.var("HOME").map(std::path::PathBuf::from) {
        Some(home) => match path.strip_prefix(&home) {
            Ok(rel) => format!("~/{}", rel.display()),
            Err(_) => path.display().to_string(),
        },
        None => path.display().to_string(),
    }
}
