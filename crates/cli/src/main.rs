//! `cairn`: the command-line tool. The hook client (`cairn hook <agent>`, with
//! its local spool: `cairn spool`), the installer of agents' hook
//! configurations (`cairn install`, `cairn uninstall`), `cairn doctor`, the
//! MCP stdio bridge (`cairn mcp`), database administration (`cairn admin`),
//! the admin API from the command line (`cairn projects|tokens|jobs`) and a
//! project's memory out and in (`cairn export`, `cairn import`, `cairn import
//! claude-mem`).
//!
//! `main` is synchronous: the hook path starts no async runtime; only `admin`
//! and `mcp` build one.

mod admin;
mod admin_api;
mod doctor;
mod install;
mod login;
mod mcp;
mod spool_cli;
mod sync;
mod transfer;

// The hook client is its own crate (also the small `cairn-hook` binary).
use cairn_hook::{agent, client_config, hook, spool};

use clap::{Parser, Subcommand};

use agent::Agent;
use client_config::{ClientConfig, ProcessEnv};

#[derive(Parser)]
#[command(name = "cairn", version, about = "Cairn: team memory for coding agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The command hook an agent runs: reads the hook JSON on stdin, sends it
    /// to Cairn (or spools it when Cairn is away), prints the agent's answer.
    /// Always exits 0.
    Hook {
        #[arg(value_enum)]
        agent: Agent,
    },
    /// The local spool of events that could not be delivered.
    Spool {
        #[command(subcommand)]
        command: spool_cli::SpoolCommand,
    },
    /// Write the agent's hook configuration (and register Cairn's MCP server).
    Install(install::InstallArgs),
    /// Remove what `cairn install` wrote, restoring the files as they were.
    Uninstall(install::UninstallArgs),
    /// Check configuration, server, token, project resolution, spool and installed hooks.
    Doctor,
    /// Sign this laptop in with your company account: a token of its own,
    /// saved to the config, then the doctor's checks.
    Login(login::LoginArgs),
    /// Revoke this laptop's token and remove it from the config.
    Logout,
    /// Administration against the database (CAIRN_DATABASE_URL, CAIRN_JWT_SECRET).
    Admin {
        #[command(subcommand)]
        command: admin::AdminCommand,
    },
    /// Serve Cairn's memory tools (search, timeline, get_observations, context)
    /// over MCP on stdin/stdout, forwarding to the API's `/v1/mcp`.
    Mcp {
        /// The Cairn API's base URL (default: the client config, then http://127.0.0.1:8080).
        #[arg(long)]
        url: Option<String>,
        /// A token with the `read` scope (default: the client config or CAIRN_TOKEN).
        #[arg(long)]
        token: Option<String>,
    },
    /// Projects of the team: list, create, change memory settings (admin token).
    Projects {
        #[command(subcommand)]
        command: admin_api::projects::ProjectsCommand,
        #[command(flatten)]
        api: admin_api::ApiArgs,
    },
    /// API tokens: list, mint (the secret is shown once), revoke (admin token).
    Tokens {
        #[command(subcommand)]
        command: admin_api::tokens::TokensCommand,
        #[command(flatten)]
        api: admin_api::ApiArgs,
    },
    /// Generation jobs: list, retry, cancel (admin token).
    Jobs {
        #[command(subcommand)]
        command: admin_api::jobs::JobsCommand,
        #[command(flatten)]
        api: admin_api::ApiArgs,
    },
    /// Private-first memory: share yours with the team or take it back;
    /// review and reject (admin).
    Memories {
        #[command(subcommand)]
        command: admin_api::memories::MemoriesCommand,
        #[command(flatten)]
        api: admin_api::ApiArgs,
    },
    /// Write a project's memory as JSON Lines (sessions, observations, summaries).
    Export(transfer::ExportArgs),
    /// Read JSON Lines of `cairn export` into a project, or `import claude-mem <file>`.
    Import(transfer::ImportArgs),
    /// Write the project's most important memories into a marked section of
    /// CLAUDE.md, AGENTS.md or a Cursor rule (`--remove` restores the file).
    Sync(sync::SyncArgs),
}

fn main() {
    let cli = Cli::parse();
    if let Command::Hook { agent } = cli.command {
        // Never fails the agent: whatever happens, exit 0.
        hook::run(agent, &ProcessEnv);
        return;
    }
    if let Err(e) = run(cli.command) {
        eprintln!("cairn: {e:#}");
        std::process::exit(1);
    }
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Hook { .. } => unreachable!("handled in main"),
        Command::Spool { command } => spool_cli::run(command, &ClientConfig::load(&ProcessEnv)?),
        Command::Install(args) => install::install(&args, &ProcessEnv),
        Command::Uninstall(args) => install::uninstall(&args, &ProcessEnv),
        Command::Doctor => {
            let healthy = doctor::run(&ClientConfig::load(&ProcessEnv)?, &ProcessEnv)?;
            if !healthy {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Login(args) => login::login(&args, &ProcessEnv),
        Command::Logout => login::logout(&ProcessEnv),
        Command::Admin { command } => runtime()?.block_on(admin::run(command)),
        Command::Mcp { url, token } => {
            let config = ClientConfig::load(&ProcessEnv)?;
            let url = url.unwrap_or(config.url);
            let token = token.or(config.token).unwrap_or_default();
            runtime()?.block_on(mcp::serve(&url, &token))
        }
        Command::Projects { command, api } => admin_api::projects::run(command, &api),
        Command::Tokens { command, api } => admin_api::tokens::run(command, &api),
        Command::Jobs { command, api } => admin_api::jobs::run(command, &api),
        Command::Memories { command, api } => admin_api::memories::run(command, &api),
        Command::Export(args) => transfer::export::run(&args),
        Command::Import(args) => transfer::run_import(args),
        Command::Sync(args) => sync::run(&args),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
