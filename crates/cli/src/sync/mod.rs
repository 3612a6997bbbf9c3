//! `cairn sync`: writes the project's most important live memories into a
//! marked section of `CLAUDE.md`, `AGENTS.md` or a Cursor rule, within a
//! line budget. A second run with nothing new changes nothing (the file is
//! not even rewritten); `--remove` restores the file as it was; `--check`
//! fails when the section is out of date.

pub mod section;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::admin_api::{ApiArgs, CALL_TIMEOUT, segment};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// `CLAUDE.md` (Claude Code).
    Claude,
    /// `AGENTS.md` (Codex and others).
    Agents,
    /// `.cursor/rules/cairn.mdc` (Cursor), with the front matter Cursor needs.
    Cursor,
}

impl Target {
    fn file(self) -> &'static str {
        match self {
            Target::Claude => "CLAUDE.md",
            Target::Agents => "AGENTS.md",
            Target::Cursor => ".cursor/rules/cairn.mdc",
        }
    }

    /// What starts a file the sync creates.
    fn prefix(self) -> &'static str {
        match self {
            Target::Cursor => "---\ndescription: Project memory from Cairn\nalwaysApply: true\n---\n",
            _ => "",
        }
    }
}

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// Project id or slug (default: the client config's project).
    #[arg(long)]
    pub project: Option<String>,
    /// Which file: claude (CLAUDE.md), agents (AGENTS.md) or cursor (.cursor/rules/cairn.mdc).
    #[arg(long, value_enum, default_value = "claude", conflicts_with = "file")]
    pub target: Target,
    /// Any other file instead.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// The repository root the target is relative to (default: the current directory).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Lines of the section at most, its markers and heading included (5..=500).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u16).range(5..=500))]
    pub lines: u16,
    /// Remove the section, restoring the file as it was before the first sync.
    #[arg(long, conflicts_with = "check")]
    pub remove: bool,
    /// Change nothing; exit non-zero when the section is missing or out of date.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub api: ApiArgs,
}

/// The heading and note above the memories (two lines of the budget, the markers two more).
const HEADING: [&str; 2] = [
    "## Project memory (Cairn)",
    "_Written by `cairn sync` from the team's memory; edits inside this section are replaced._",
];

pub fn run(args: &SyncArgs) -> anyhow::Result<()> {
    let path = match &args.file {
        Some(file) => args.dir.join(file),
        None => args.dir.join(args.target.file()),
    };
    let prefix = if args.file.is_some() {
        ""
    } else {
        args.target.prefix()
    };
    let original = read(&path)?;
    if args.remove {
        let Some(text) = &original else {
            println!("{}: no such file, nothing to remove", path.display());
            return Ok(());
        };
        match section::remove(text)? {
            None => {
                std::fs::remove_file(&path)?;
                println!("{}: removed (sync had created it)", path.display());
            }
            Some(restored) if &restored == text => println!("{}: no Cairn section", path.display()),
            Some(restored) => {
                std::fs::write(&path, restored)?;
                println!("{}: section removed", path.display());
            }
        }
        return Ok(());
    }
    let lines = digest(args)?;
    let updated = section::upsert(original.as_deref(), &lines, prefix)?;
    let unchanged = original.as_deref() == Some(updated.as_str());
    if args.check {
        if unchanged {
            println!("{}: up to date", path.display());
            return Ok(());
        }
        anyhow::bail!(
            "{}: the Cairn section is missing or out of date; run `cairn sync`",
            path.display()
        );
    }
    if unchanged {
        println!("{}: up to date ({})", path.display(), memories(&lines));
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &updated)?;
    println!("{}: {} written", path.display(), memories(&lines));
    Ok(())
}

/// "1 memory", "3 memories": the section's lines below its heading.
fn memories(lines: &[String]) -> String {
    match lines.len().saturating_sub(HEADING.len()) {
        1 => "1 memory".into(),
        n => format!("{n} memories"),
    }
}

fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!("{}: not UTF-8 text; sync edits text files only", path.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// The section's lines: the heading, then the digest within the budget.
fn digest(args: &SyncArgs) -> anyhow::Result<Vec<String>> {
    let project = match &args.project {
        Some(p) => p.clone(),
        None => crate::client_config::ClientConfig::load(&crate::client_config::ProcessEnv)?
            .project
            .ok_or_else(|| anyhow::anyhow!("no project: pass --project (id or slug)"))?,
    };
    let memories = usize::from(args.lines).saturating_sub(HEADING.len() + 2).max(1);
    let api = args.api.api(Some(CALL_TIMEOUT))?;
    let body = api.get(&format!(
        "/v1/projects/{}/memory-digest?lines={memories}",
        segment(&project)
    ))?;
    let mut lines: Vec<String> = HEADING.iter().map(|s| s.to_string()).collect();
    lines.extend(
        body["lines"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l.as_str())
            .map(|l| l.replace(['\r', '\n'], " ")),
    );
    Ok(lines)
}
