//! `cairn jobs list|retry|cancel`.

use clap::Subcommand;
use serde_json::json;

use super::{
    ApiArgs, CALL_TIMEOUT,
    output::{Column, print_json, print_table, short, text, time},
    segment,
};

#[derive(Subcommand, Debug)]
pub enum JobsCommand {
    /// List generation jobs, newest first.
    List {
        /// queued, processing, completed, failed or cancelled.
        #[arg(long)]
        status: Option<String>,
        /// 1..=200.
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value_t = 0)]
        offset: i64,
    },
    /// Send a failed or cancelled job back to the queue.
    Retry { id: String },
    /// Cancel a queued or processing job.
    Cancel { id: String },
}

const COLUMNS: &[Column] = &[
    Column {
        header: "ID",
        show: |j| text(&j["id"]),
    },
    Column {
        header: "STATUS",
        show: |j| text(&j["status"]),
    },
    Column {
        header: "TYPE",
        show: |j| text(&j["jobType"]),
    },
    Column {
        header: "ATTEMPTS",
        show: |j| format!("{}/{}", text(&j["attempts"]), text(&j["maxAttempts"])),
    },
    Column {
        header: "PROJECT",
        show: |j| text(&j["projectId"]),
    },
    Column {
        header: "CREATED",
        show: |j| time(&j["createdAtEpoch"]),
    },
    Column {
        header: "LAST ERROR",
        show: |j| short(&text(&j["lastError"]), 60),
    },
];

pub fn run(command: JobsCommand, args: &ApiArgs) -> anyhow::Result<()> {
    let api = args.api(Some(CALL_TIMEOUT))?;
    let answer = match command {
        JobsCommand::List {
            status,
            limit,
            offset,
        } => {
            let mut query = format!("?limit={limit}&offset={offset}");
            if let Some(s) = status {
                query.push_str(&format!("&status={}", segment(&s)));
            }
            api.get(&format!("/v1/jobs{query}"))?
        }
        JobsCommand::Retry { id } => api.post(&format!("/v1/jobs/{}/retry", segment(&id)), &json!({}))?,
        JobsCommand::Cancel { id } => api.post(&format!("/v1/jobs/{}/cancel", segment(&id)), &json!({}))?,
    };
    if args.json {
        print_json(&answer);
        return Ok(());
    }
    match answer["jobs"].as_array() {
        Some(list) => {
            print_table(list, COLUMNS);
            println!("{} of {} job(s)", list.len(), text(&answer["total"]));
        }
        None => print_table(std::slice::from_ref(&answer["generationJob"]), COLUMNS),
    }
    Ok(())
}
