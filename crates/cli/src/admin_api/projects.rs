//! `cairn projects list|create|update`.

use clap::Subcommand;
use serde_json::{Map, Value, json};

use super::{
    ApiArgs, CALL_TIMEOUT,
    output::{Column, print_json, print_table, text, time},
    segment,
};

#[derive(Subcommand, Debug)]
pub enum ProjectsCommand {
    /// List the team's projects.
    List {
        /// Another team's projects (superadmin).
        #[arg(long)]
        team_id: Option<String>,
    },
    /// Create a project.
    Create {
        /// Lowercase letters, digits, `-`, `_`, `.`.
        slug: String,
        #[arg(long)]
        name: Option<String>,
        /// In another team (superadmin).
        #[arg(long)]
        team_id: Option<String>,
    },
    /// Change a project's memory settings.
    Update {
        /// Project id or slug.
        project: String,
        /// 200..=50000 tokens of context at SessionStart.
        #[arg(long)]
        context_budget_tokens: Option<i32>,
        /// Answer prompts with related memories.
        #[arg(long)]
        prompt_context: Option<bool>,
        /// 100..=5000 tokens for those memories.
        #[arg(long)]
        prompt_context_budget_tokens: Option<i32>,
        /// Model tokens per UTC day for this project, or `none` for no budget.
        #[arg(long)]
        llm_daily_token_budget: Option<String>,
        /// Days raw hook events of digested turns are kept, or `default`
        /// for the deployment's CAIRN_RAW_EVENT_RETENTION_DAYS.
        #[arg(long)]
        raw_event_retention_days: Option<String>,
    },
}

const COLUMNS: &[Column] = &[
    Column {
        header: "ID",
        show: |p| text(&p["id"]),
    },
    Column {
        header: "SLUG",
        show: |p| text(&p["slug"]),
    },
    Column {
        header: "NAME",
        show: |p| text(&p["name"]),
    },
    Column {
        header: "CONTEXT",
        show: |p| text(&p["contextBudgetTokens"]),
    },
    Column {
        header: "PROMPT CONTEXT",
        show: |p| text(&p["promptContext"]),
    },
    Column {
        header: "CREATED",
        show: |p| time(&p["createdAtEpoch"]),
    },
];

pub fn run(command: ProjectsCommand, args: &ApiArgs) -> anyhow::Result<()> {
    let api = args.api(Some(CALL_TIMEOUT))?;
    let answer = match command {
        ProjectsCommand::List { team_id } => {
            let query = team_id
                .map(|t| format!("?teamId={}", segment(&t)))
                .unwrap_or_default();
            api.get(&format!("/v1/admin/projects{query}"))?
        }
        ProjectsCommand::Create { slug, name, team_id } => api.post(
            "/v1/admin/projects",
            &json!({"slug": slug, "name": name, "teamId": team_id}),
        )?,
        ProjectsCommand::Update {
            project,
            context_budget_tokens,
            prompt_context,
            prompt_context_budget_tokens,
            llm_daily_token_budget,
            raw_event_retention_days,
        } => {
            let mut body = Map::new();
            if let Some(v) = context_budget_tokens {
                body.insert("contextBudgetTokens".into(), v.into());
            }
            if let Some(v) = prompt_context {
                body.insert("promptContext".into(), v.into());
            }
            if let Some(v) = prompt_context_budget_tokens {
                body.insert("promptContextBudgetTokens".into(), v.into());
            }
            if let Some(v) = llm_daily_token_budget {
                let budget = match v.as_str() {
                    "none" | "null" => Value::Null,
                    n => n.parse::<i64>().map(Value::from).map_err(|_| {
                        anyhow::anyhow!("--llm-daily-token-budget: a number of tokens, or `none`")
                    })?,
                };
                body.insert("llmDailyTokenBudget".into(), budget);
            }
            if let Some(v) = raw_event_retention_days {
                let days = match v.as_str() {
                    "default" | "none" | "null" => Value::Null,
                    n => n.parse::<i64>().map(Value::from).map_err(|_| {
                        anyhow::anyhow!("--raw-event-retention-days: a number of days, or `default`")
                    })?,
                };
                body.insert("rawEventRetentionDays".into(), days);
            }
            if body.is_empty() {
                anyhow::bail!("nothing to change: pass at least one setting (see --help)");
            }
            api.patch(
                &format!("/v1/admin/projects/{}", segment(&project)),
                &Value::Object(body),
            )?
        }
    };
    if args.json {
        print_json(&answer);
    } else if let Some(list) = answer["projects"].as_array() {
        print_table(list, COLUMNS);
    } else {
        print_table(std::slice::from_ref(&answer["project"]), COLUMNS);
    }
    Ok(())
}
