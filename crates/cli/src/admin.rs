//! `cairn admin`: first-start bootstrap and migrations, straight against the database.

use clap::Subcommand;

use cairn_shared::{
    auth::{SigningKey, TokenSigner},
    bootstrap,
    config::{ProcessEnv, StoreConfig, required},
    db,
};

#[derive(Subcommand)]
pub enum AdminCommand {
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

pub async fn run(command: AdminCommand) -> anyhow::Result<()> {
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
