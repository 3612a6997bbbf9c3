//! `cairn login <url>`: a token of this laptop's own for the signed-in
//! member, without copying one by hand. The server gives a code and a page
//! to open; the person signs in there with the company's account, checks
//! the code and approves; this command collects the token (ingest + read on
//! the team's projects, named after the host), writes it with the URL to
//! the 0600 config and runs the doctor's checks. `cairn logout` revokes the
//! configured token on the server and removes it from the config.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::client_config::{ClientConfig, Env, FileConfig, config_path, read_file, write_file};

#[derive(clap::Args)]
pub struct LoginArgs {
    /// The Cairn server's URL (`https://cairn.example.com`).
    pub url: String,
    /// Print the page to open instead of opening a browser (SSH sessions, containers).
    #[arg(long)]
    pub no_browser: bool,
    /// The name the token is minted for (default: this machine's host name).
    #[arg(long)]
    pub host: Option<String>,
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(15)))
        .user_agent(concat!("cairn-login/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

fn post(http: &ureq::Agent, url: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
    let mut response = http
        .post(url)
        .header("content-type", "application/json")
        .send(body.to_string())
        .with_context(|| format!("POST {url}"))?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

fn error_of(body: &Value) -> String {
    body["error"]["message"]
        .as_str()
        .or(body["error"]["code"].as_str())
        .unwrap_or("unexpected answer")
        .to_string()
}

/// This machine's name: `$HOSTNAME`, `/etc/hostname`, then `hostname`.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .or_else(|| {
            std::process::Command::new("hostname")
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
        })
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "laptop".into())
}

/// Opens the page in the desktop's browser; false when there is none.
fn open_browser(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

pub fn login(args: &LoginArgs, env: &dyn Env) -> anyhow::Result<()> {
    let base = args.url.trim().trim_end_matches('/');
    if !base.starts_with("http://") && !base.starts_with("https://") {
        bail!("the server URL must start with http:// or https:// (got {base:?})");
    }
    let http = agent();
    let host = args.host.clone().unwrap_or_else(host_name);
    let (status, started) = post(&http, &format!("{base}/auth/cli/start"), &json!({ "host": host }))?;
    if status != 201 {
        bail!(
            "{base} refused to start a login ({status}): {}",
            error_of(&started)
        );
    }
    let page = format!("{base}{}", started["verifyPath"].as_str().unwrap_or("/"));
    let code = started["userCode"].as_str().unwrap_or("?");
    eprintln!(
        "To sign in {host}, open\n\n    {page}\n\nsign in with your company account and check that the page shows the code {code}."
    );
    if !args.no_browser && open_browser(&page) {
        eprintln!("(opened in your browser)");
    }
    let poll = json!({ "loginId": started["loginId"], "pollSecret": started["pollSecret"] });
    let interval = Duration::from_secs(started["intervalSeconds"].as_u64().unwrap_or(1).max(1));
    let deadline = Instant::now() + Duration::from_secs(started["expiresInSeconds"].as_u64().unwrap_or(600));
    let collected = loop {
        let (status, body) = post(&http, &format!("{base}/auth/cli/poll"), &poll)?;
        match status {
            200 => break body,
            202 if Instant::now() < deadline => std::thread::sleep(interval),
            202 => bail!("nobody approved this login within ten minutes: run `cairn login` again"),
            _ => bail!("the login failed ({status}): {}", error_of(&body)),
        }
    };
    let token = collected["token"]
        .as_str()
        .context("the server answered no token")?;
    let path = config_path(env).context("no config directory (set HOME or CAIRN_CONFIG)")?;
    let mut file: FileConfig = read_file(&path)?;
    file.url = Some(base.to_string());
    file.token = Some(token.to_string());
    write_file(&path, &file)?;
    let who = collected["member"]["email"]
        .as_str()
        .or(collected["member"]["name"].as_str())
        .unwrap_or("you");
    eprintln!(
        "Signed in as {who}: token \"{}\" saved to {}.\n",
        collected["name"].as_str().unwrap_or("laptop"),
        path.display()
    );
    crate::doctor::run(&ClientConfig::load(env)?, env)?;
    Ok(())
}

pub fn logout(env: &dyn Env) -> anyhow::Result<()> {
    let path = config_path(env).context("no config directory (set HOME or CAIRN_CONFIG)")?;
    let mut file = read_file(&path)?;
    let Some(token) = file.token.clone() else {
        eprintln!("No token in {}: nothing to do.", path.display());
        return Ok(());
    };
    let config = ClientConfig::load(env)?;
    let url = format!("{}/v1/whoami", config.url);
    let response = agent()
        .delete(&url)
        .header("authorization", &format!("Bearer {token}"))
        .call()
        .with_context(|| format!("DELETE {url}"))?;
    match response.status().as_u16() {
        // Revoked now, or refused as revoked or unknown already: either way it is gone.
        204 | 403 => {}
        status => bail!(
            "{} did not revoke the token ({status}); it stays in {}",
            config.url,
            path.display()
        ),
    }
    file.token = None;
    write_file(&path, &file)?;
    eprintln!(
        "Signed out: the token is revoked and removed from {}.",
        path.display()
    );
    Ok(())
}
