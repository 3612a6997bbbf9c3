//! `cairn projects|tokens|jobs|memories`: the admin API from the command line. A
//! table for people by default, the API's JSON with `--json`; a refusal
//! prints the API's error code and message and exits non-zero.

pub mod client;
pub mod jobs;
pub mod memories;
pub mod output;
pub mod projects;
pub mod tokens;

use std::time::Duration;

use clap::Args;

use crate::client_config::{ClientConfig, ProcessEnv};
use client::Api;

/// Where the API is and who calls it; shared by every API command.
#[derive(Args, Clone, Debug)]
pub struct ApiArgs {
    /// The Cairn API's base URL (default: CAIRN_URL, the client config, then http://127.0.0.1:8080).
    #[arg(long, global = true)]
    pub url: Option<String>,
    /// An admin token (default: CAIRN_TOKEN or the client config).
    #[arg(long, global = true)]
    pub token: Option<String>,
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

impl ApiArgs {
    /// A client for these settings; `timeout` bounds each whole call.
    pub fn api(&self, timeout: Option<Duration>) -> anyhow::Result<Api> {
        let config = ClientConfig::load(&ProcessEnv)?;
        let url = self.url.clone().unwrap_or(config.url);
        let token = self
            .token
            .clone()
            .or(config.token)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| anyhow::anyhow!("no token: pass --token or set CAIRN_TOKEN (an admin token)"))?;
        Ok(Api::new(&url, &token, timeout))
    }
}

/// Admin calls are small: 30 s is plenty.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A path segment, percent-encoded (slugs and ids are safe, but input is input).
pub fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
