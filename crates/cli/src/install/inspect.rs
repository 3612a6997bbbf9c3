//! What `cairn doctor` reports about installs: for each agent and scope, the
//! hooks file, which of Cairn's events it holds, and whether the `cairn` its
//! commands name can still be run.

use std::path::{Path, PathBuf};

use super::{Setup, hooks::HookSet, json_edit, scope::Scope, target::JsonEdit, targets};
use crate::{agent::Agent, client_config::Env};

#[derive(Debug, Clone)]
pub struct Installed {
    pub agent: Agent,
    pub scope: Scope,
    pub path: PathBuf,
    pub events: Vec<&'static str>,
    pub expected: usize,
    /// Programs named by Cairn's hook commands that cannot be run any more.
    pub missing_programs: Vec<String>,
}

impl Installed {
    pub fn complete(&self) -> bool {
        self.events.len() == self.expected && self.missing_programs.is_empty()
    }
}

/// Every agent and scope where Cairn's hooks are found (even partly).
pub fn installed(env: &dyn Env) -> anyhow::Result<Vec<Installed>> {
    let mut found = Vec::new();
    for scope in [Scope::Project, Scope::User] {
        let setup = Setup::new(scope, env, None)?;
        for agent in Agent::ALL {
            for target in targets(agent, &setup) {
                let super::target::Kind::Json(edits) = &target.kind else {
                    continue;
                };
                for edit in edits {
                    let JsonEdit::Hooks(set) = edit else { continue };
                    if let Some(i) = inspect(agent, scope, &target.path, set, env) {
                        found.push(i);
                    }
                }
            }
        }
    }
    Ok(found)
}

fn inspect(agent: Agent, scope: Scope, path: &Path, set: &HookSet, env: &dyn Env) -> Option<Installed> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc = json_edit::document_value(&json_edit::parse(Some(&text)).ok()?);
    let (events, commands) = set.found(&doc);
    if events.is_empty() {
        return None;
    }
    let mut missing_programs: Vec<String> = commands
        .iter()
        .filter_map(|c| first_word(c))
        .filter(|p| !runnable(p, env))
        .collect();
    missing_programs.sort();
    missing_programs.dedup();
    Some(Installed {
        agent,
        scope,
        path: path.to_path_buf(),
        events,
        expected: set.events.len(),
        missing_programs,
    })
}

fn first_word(command: &str) -> Option<String> {
    super::command::shell_words(command)?.into_iter().next()
}

/// An absolute path that is a file, or a bare name found on PATH.
fn runnable(program: &str, env: &dyn Env) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    env.var("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}
