//! `cairn memories promote|unpromote|reject|review`: private-first memory from
//! the command line. A member promotes (shares) their own memories with the team (the
//! laptop's token from `cairn login`); an admin reviews anyone's.

use clap::Subcommand;
use serde_json::json;

use crate::client_config::{ClientConfig, ProcessEnv};

use super::{
    ApiArgs, CALL_TIMEOUT,
    output::{Column, print_json, print_table, short, text, time},
    segment,
};

#[derive(Subcommand, Debug)]
pub enum MemoriesCommand {
    /// Share one of your private memories with the team (an admin: anyone's).
    Promote { id: String },
    /// Take a sharing back: the memory is its author's alone again.
    Unpromote { id: String },
    /// Reject a private memory in review (admin): it stays private and the
    /// project's rule never promotes it.
    Reject { id: String },
    /// The review queue (admin): private memories nobody rejected, oldest first.
    Review {
        /// Project id or slug (default: CAIRN_PROJECT or the client config's,
        /// else the token's own project).
        #[arg(long)]
        project: Option<String>,
        /// 1..=500.
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
}

const COLUMNS: &[Column] = &[
    Column {
        header: "ID",
        show: |m| text(&m["id"]),
    },
    Column {
        header: "SOURCE",
        show: |m| text(&m["source"]),
    },
    Column {
        header: "VISIBILITY",
        show: |m| text(&m["visibility"]),
    },
    Column {
        header: "AUTHOR",
        show: |m| text(&m["memberId"]),
    },
    Column {
        header: "CREATED",
        show: |m| time(&m["createdAtEpoch"]),
    },
    Column {
        header: "TITLE",
        show: |m| short(&text(&m["title"]), 60),
    },
];

pub fn run(command: MemoriesCommand, args: &ApiArgs) -> anyhow::Result<()> {
    let api = args.api(Some(CALL_TIMEOUT))?;
    let change = |verb: &str, id: &str| api.post(&format!("/v1/memories/{}/{verb}", segment(id)), &json!({}));
    let answer = match command {
        MemoriesCommand::Promote { id } => change("promote", &id)?,
        MemoriesCommand::Unpromote { id } => change("unpromote", &id)?,
        MemoriesCommand::Reject { id } => change("reject", &id)?,
        MemoriesCommand::Review { project, limit } => {
            let mut query = format!("?limit={limit}");
            let project = project.or(ClientConfig::load(&ProcessEnv)?.project);
            if let Some(p) = project {
                query.push_str(&format!("&projectId={}", segment(&p)));
            }
            api.get(&format!("/v1/review{query}"))?
        }
    };
    if args.json {
        print_json(&answer);
        return Ok(());
    }
    match answer["memories"].as_array() {
        Some(list) => {
            print_table(list, COLUMNS);
            println!("{} memory(ies) waiting for review", list.len());
        }
        None => print_table(std::slice::from_ref(&answer["memory"]), COLUMNS),
    }
    Ok(())
}
