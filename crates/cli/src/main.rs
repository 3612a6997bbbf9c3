//! `cairn`: the command-line tool. Today: `cairn admin bootstrap` (create the
//! default team, project and tokens on an empty database), `cairn admin
//! migrate`, and `cairn mcp` (the memory tools over stdio, `mcp.rs`). Hook
//! posting with a local spool comes later.

mod mcp;

use clap::{Parser, Subcommand};

use cairn_shared::{
    auth::{SigningKey, TokenSigner},
    bootstrap,
    config::{ProcessEnv, StoreConfig, required},
    db,
};

#[derive(Parser)]
#[command(name = "cairn", version, about = "Cairn: team memory for coding agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Administration against the database (CAIRN_DATABASE_URL, CAIRN_JWT_SECRET).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Serve Cairn's memory tools (search, timeline, get_observations, context)
    /// over MCP on stdin/stdout, forwarding to the API's `/v1/mcp`.
    Mcp {
        /// The Cairn API's base URL.
        #[arg(long, env = "CAIRN_URL", default_value = "http://127.0.0.1:8080")]
        url: String,
        /// A token with the `read` scope.
        #[arg(long, env = "CAIRN_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Apply migrations, then create the default team, project, admin and
    /// ingest tokens if the database has no team yet; prints the secrets once.
    Bootstrap {
        /// Base URL printed in the example command.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        url: String,
    },
    /// Apply pending migrations and exit.
    Migrate,
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli).await {
        eprintln!("cairn: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let command = match cli.command {
        Command::Admin { command } => command,
        Command::Mcp { url, token } => return mcp::serve(&url, token.as_deref().unwrap_or_default()).await,
    };
    let store = StoreConfig::from_env(&ProcessEnv)?;
    let pool = db::connect(&store).await?;
    db::run_migrations(&pool).await?;
    match command {
        AdminCommand::Migrate => println!("migrations applied"),
        AdminCommand::Bootstrap { url } => {
            let key = required(&ProcessEnv, "CAIRN_JWT_SECRET", "the API's token signing secret")?;
            let key =
                SigningKey::new(key.into_bytes()).map_err(|e| anyhow::anyhow!("CAIRN_JWT_SECRET {e}"))?;
            match bootstrap::bootstrap_if_empty(&pool, &TokenSigner::new(&key)).await? {
                Some(done) => println!("{}", done.banner(&url)),
                None => println!(
                    "already bootstrapped: a team exists; mint more tokens with POST /v1/admin/tokens"
                ),
            }
        }
    }
    Ok(())
}
