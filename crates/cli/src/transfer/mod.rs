//! `cairn export` and `cairn import`: a project's memory as JSON Lines
//! (sessions, observations, summaries), and claude-mem's SQLite history
//! brought in as the same lines.

pub mod claude_mem;
pub mod export;
pub mod import;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::admin_api::ApiArgs;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Project id or slug.
    #[arg(long)]
    pub project: String,
    /// Write here instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub source: Option<ImportSource>,
    /// Project id or slug to import into.
    #[arg(long)]
    pub project: Option<String>,
    /// Read this file instead of stdin.
    #[arg(long, short)]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub options: SendOptions,
    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Subcommand, Debug)]
pub enum ImportSource {
    /// Bring a claude-mem database (~/.claude-mem/claude-mem.db) in as
    /// sessions, observations and summaries. Re-running adds nothing new.
    ClaudeMem {
        /// The claude-mem SQLite file.
        file: PathBuf,
        /// Project id or slug to import into.
        #[arg(long)]
        project: String,
        /// Only this claude-mem project (its `project` column); default all.
        #[arg(long)]
        only_project: Option<String>,
        #[command(flatten)]
        options: SendOptions,
        #[command(flatten)]
        api: ApiArgs,
    },
}

#[derive(Args, Debug, Clone)]
pub struct SendOptions {
    /// Bytes per import request. Over the API's CAIRN_MAX_BODY_BYTES (2 MiB by
    /// default), requests are halved until they fit.
    #[arg(long, default_value_t = 1 << 20)]
    pub request_bytes: usize,
}

pub fn run_import(args: ImportArgs) -> anyhow::Result<()> {
    match args.source {
        Some(ImportSource::ClaudeMem {
            file,
            project,
            only_project,
            options,
            api,
        }) => claude_mem::run(&file, &project, only_project.as_deref(), &options, &api),
        None => {
            let project = args
                .project
                .ok_or_else(|| anyhow::anyhow!("--project is required (id or slug)"))?;
            import::run_file(args.input.as_deref(), &project, &args.options, &args.api)
        }
    }
}
