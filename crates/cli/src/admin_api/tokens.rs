//! `cairn tokens list|create|revoke`.

use clap::Subcommand;
use serde_json::{Value, json};

use super::{
    ApiArgs, CALL_TIMEOUT,
    output::{Column, print_json, print_table, text, time},
    segment,
};

#[derive(Subcommand, Debug)]
pub enum TokensCommand {
    /// List the team's tokens (never their secrets).
    List {
        /// Another team's tokens (superadmin).
        #[arg(long)]
        team_id: Option<String>,
    },
    /// Mint a token; its secret is printed once.
    Create {
        /// What the token is for.
        #[arg(long)]
        name: String,
        /// `ingest`, `read`, `admin` (repeat, or separate with commas).
        #[arg(long = "scope", value_delimiter = ',', required = true)]
        scopes: Vec<String>,
        /// Restrict it to one project (id or slug).
        #[arg(long)]
        project: Option<String>,
        /// When it stops working, epoch milliseconds.
        #[arg(long)]
        expires_at_epoch: Option<i64>,
        /// In another team (superadmin).
        #[arg(long)]
        team_id: Option<String>,
    },
    /// Revoke a token for good.
    Revoke {
        /// The token's id.
        id: String,
    },
}

fn state(t: &Value) -> String {
    let now = chrono::Utc::now().timestamp_millis();
    if !t["revokedAtEpoch"].is_null() {
        "revoked".into()
    } else if t["expiresAtEpoch"].as_i64().is_some_and(|at| at <= now) {
        "expired".into()
    } else {
        "active".into()
    }
}

const COLUMNS: &[Column] = &[
    Column {
        header: "ID",
        show: |t| text(&t["id"]),
    },
    Column {
        header: "NAME",
        show: |t| text(&t["name"]),
    },
    Column {
        header: "SCOPES",
        show: |t| {
            t["scopes"]
                .as_array()
                .map(|s| s.iter().map(text).collect::<Vec<_>>().join(","))
                .unwrap_or_default()
        },
    },
    Column {
        header: "PROJECT",
        show: |t| text(&t["projectId"]),
    },
    Column {
        header: "STATE",
        show: state,
    },
    Column {
        header: "LAST USED",
        show: |t| time(&t["lastUsedAtEpoch"]),
    },
    Column {
        header: "CREATED",
        show: |t| time(&t["createdAtEpoch"]),
    },
];

pub fn run(command: TokensCommand, args: &ApiArgs) -> anyhow::Result<()> {
    let api = args.api(Some(CALL_TIMEOUT))?;
    let answer = match command {
        TokensCommand::List { team_id } => {
            let query = team_id
                .map(|t| format!("?teamId={}", segment(&t)))
                .unwrap_or_default();
            api.get(&format!("/v1/admin/tokens{query}"))?
        }
        TokensCommand::Create {
            name,
            scopes,
            project,
            expires_at_epoch,
            team_id,
        } => api.post(
            "/v1/admin/tokens",
            &json!({"name": name, "scopes": scopes, "projectId": project,
                    "expiresAtEpoch": expires_at_epoch, "teamId": team_id}),
        )?,
        TokensCommand::Revoke { id } => {
            api.post(&format!("/v1/admin/tokens/{}/revoke", segment(&id)), &json!({}))?
        }
    };
    if args.json {
        print_json(&answer);
        return Ok(());
    }
    match answer["tokens"].as_array() {
        Some(list) => print_table(list, COLUMNS),
        None => print_table(std::slice::from_ref(&answer["token"]), COLUMNS),
    }
    if let Some(secret) = answer["secret"].as_str() {
        println!("\nsecret (shown once, keep it safe):\n{secret}");
    }
    Ok(())
}
