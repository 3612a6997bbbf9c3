//! `cairn-api` binary: configuration from the environment, then serve.

use cairn_api::{config::ApiConfig, server};
use cairn_shared::config::ProcessEnv;

#[tokio::main]
async fn main() {
    cairn_shared::telemetry::init("info,sqlx=warn");
    let config = match ApiConfig::from_env(&ProcessEnv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn-api: configuration error: {e}");
            std::process::exit(2);
        }
    };
    let listen = config.listen;
    let result = async {
        let state = server::prepare(config).await?;
        let listener = tokio::net::TcpListener::bind(listen).await?;
        server::serve(state, listener).await
    }
    .await;
    if let Err(e) = result {
        eprintln!("cairn-api: {e:#}");
        std::process::exit(1);
    }
}
