//! `cairn install <agent>` and `cairn uninstall <agent>`: write the agent's
//! hook configuration (`<cairn> hook <agent>` on every event Cairn uses) and
//! register Cairn's MCP server, merged into the files already there, and take
//! them out again leaving those files as they were.

mod apply;
mod backup;
mod claude_code;
mod codex;
mod command;
mod cursor;
mod files;
mod gemini;
mod hooks;
pub mod inspect;
mod json_edit;
mod mcp;
mod scope;
mod target;
mod windsurf;

use std::path::{Path, PathBuf};

use clap::Args;

pub use scope::Scope;

use crate::{
    agent::Agent,
    client_config::{self, ClientConfig, Env},
};
use command::Program;
use scope::Place;
use target::Target;

#[derive(Args)]
pub struct InstallArgs {
    #[arg(value_enum)]
    pub agent: Agent,
    /// The Cairn server's URL, saved in the client config.
    #[arg(long)]
    pub url: Option<String>,
    /// An ingest token, saved in the client config (mode 0600), never in the agent's files.
    #[arg(long)]
    pub token: Option<String>,
    /// The project (slug or id) events belong to, saved in the client config.
    #[arg(long)]
    pub project: Option<String>,
    /// `project`: the repository's files (to commit); `user`: your own settings.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// Claude Code only: let Claude Code POST events itself (`http` hooks,
    /// token from $CAIRN_TOKEN) wherever it allows; SessionStart stays a
    /// command hook. Events sent while the server is away are lost.
    #[arg(long)]
    pub http: bool,
}

#[derive(Args)]
pub struct UninstallArgs {
    #[arg(value_enum)]
    pub agent: Agent,
    /// The scope given to `cairn install`.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
}

/// What the per-agent modules need to describe their files.
pub struct Setup {
    pub place: Place,
    pub program: Program,
    /// Claude Code `--http`: the hook URL Claude Code posts to.
    pub http_url: Option<String>,
    /// `$CODEX_HOME`, default `~/.codex`.
    pub codex_home: PathBuf,
}

impl Setup {
    fn new(scope: Scope, env: &dyn Env, http_url: Option<String>) -> anyhow::Result<Setup> {
        let cwd = std::env::current_dir()?;
        let place = Place::resolve(scope, env, &cwd)?;
        let codex_home = env
            .var("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| place.home.join(".codex"));
        Ok(Setup {
            place,
            program: Program::detect(env)?,
            http_url,
            codex_home,
        })
    }

    /// Who relies on a file, for files two installs share.
    fn owner(&self, agent: Agent) -> String {
        format!(
            "{agent}:{}:{}",
            self.place.scope.name(),
            self.place.root.display()
        )
    }
}

/// The files Cairn writes for an agent.
pub fn targets(agent: Agent, setup: &Setup) -> Vec<Target> {
    match agent {
        Agent::ClaudeCode => claude_code::targets(setup),
        Agent::Cursor => cursor::targets(setup),
        Agent::Codex => codex::targets(setup),
        Agent::Gemini => gemini::targets(setup),
        Agent::Windsurf => windsurf::targets(setup),
    }
}

fn store(env: &dyn Env) -> anyhow::Result<backup::Store> {
    let config = client_config::config_path(env).ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
    let dir = config.parent().unwrap_or(Path::new(".")).join("installs");
    Ok(backup::Store::new(dir))
}

pub fn install(args: &InstallArgs, env: &dyn Env) -> anyhow::Result<()> {
    if args.http && args.agent != Agent::ClaudeCode {
        anyhow::bail!(
            "--http is for claude-code only: {} runs command hooks",
            args.agent
        );
    }
    let saved = save_client_config(args, env)?;
    let config = ClientConfig::load(env)?;
    let http_url = args.http.then(|| http_hook_url(&config));
    let setup = Setup::new(args.scope, env, http_url)?;
    let store = store(env)?;
    let owner = setup.owner(args.agent);

    println!(
        "cairn install {} ({} scope: {})",
        args.agent,
        args.scope.name(),
        display(&setup.place.root, &setup)
    );
    for target in targets(args.agent, &setup) {
        let outcome = apply::install(&target, &store, &owner)?;
        println!("  {} {}", outcome.verb(), display(&target.path, &setup));
    }
    for line in saved {
        println!("  {line}");
    }
    if config.token.is_none() {
        eprintln!(
            "warning: no token configured: hooks will spool events until one is set \
             (`cairn install {} --token …` or CAIRN_TOKEN)",
            args.agent
        );
    }
    if args.http {
        println!("  note: http hooks read the token from $CAIRN_TOKEN in Claude Code's environment");
    }
    if args.agent == Agent::Codex && args.scope == Scope::Project {
        println!("  note: Codex loads project hooks and MCP servers once you trust the project");
    }
    Ok(())
}

pub fn uninstall(args: &UninstallArgs, env: &dyn Env) -> anyhow::Result<()> {
    let setup = Setup::new(args.scope, env, None)?;
    let store = store(env)?;
    let owner = setup.owner(args.agent);
    println!(
        "cairn uninstall {} ({} scope: {})",
        args.agent,
        args.scope.name(),
        display(&setup.place.root, &setup)
    );
    // In reverse: the last file written goes first, so the directories the
    // first one created are empty by the time it goes.
    for target in targets(args.agent, &setup).iter().rev() {
        let outcome = apply::uninstall(target, &store, &owner)?;
        println!("  {} {}", outcome.verb(), display(&target.path, &setup));
    }
    Ok(())
}

/// Stores `--url`, `--token`, `--project` in the client config; returns what
/// to report (never the token itself).
fn save_client_config(args: &InstallArgs, env: &dyn Env) -> anyhow::Result<Vec<String>> {
    if args.url.is_none() && args.token.is_none() && args.project.is_none() {
        return Ok(Vec::new());
    }
    let path = client_config::config_path(env).ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
    let before = client_config::read_file(&path)?;
    let mut file = before.clone();
    let mut lines = Vec::new();
    let shown = tilde(&path, env);
    if let Some(url) = &args.url {
        file.url = Some(url.trim_end_matches('/').to_string());
        lines.push(format!("url {} saved to {shown}", url.trim_end_matches('/')));
    }
    if let Some(token) = &args.token {
        let token = token.trim();
        // A copy-paste that took a neighbouring line too would be stored and
        // then refused on every hook; say so now (without echoing it).
        if token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            anyhow::bail!("--token holds spaces or line breaks: pass the token alone");
        }
        file.token = Some(token.to_string());
        lines.push(format!("token saved to {shown}"));
    }
    if let Some(project) = &args.project {
        file.project = Some(project.clone());
        lines.push(format!("project {project} saved to {shown}"));
    }
    if file != before || !path.exists() {
        client_config::write_file(&path, &file)?;
    }
    Ok(lines)
}

/// `{url}/v1/hooks/claude-code`, with the configured project.
fn http_hook_url(config: &ClientConfig) -> String {
    let mut url = format!("{}/v1/hooks/claude-code", config.url);
    if let Some(project) = &config.project {
        url.push_str("?project=");
        url.push_str(&percent_encode(project));
    }
    url
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A path as the user thinks of it: relative to the project root, or `~/…`.
fn display(path: &Path, setup: &Setup) -> String {
    if setup.place.scope == Scope::Project
        && let Ok(rel) = path.strip_prefix(&setup.place.root)
        && !rel.as_os_str().is_empty()
    {
        return rel.display().to_string();
    }
    match path.strip_prefix(&setup.place.home) {
        Ok(rel) if rel.as_os_str().is_empty() => "~".into(),
        Ok(rel) => format!("~/{}", rel.display()),
        Err(_) => path.display().to_string(),
    }
}

fn tilde(path: &Path, env: &dyn Env) -> String {
    match env.var("HOME").map(PathBuf::from) {
        Some(home) => match path.strip_prefix(&home) {
            Ok(rel) => format!("~/{}", rel.display()),
            Err(_) => path.display().to_string(),
        },
        None => path.display().to_string(),
    }
}
