//! Where an install goes: the project (the repository's root, or the current
//! directory outside a repository) or the user's home.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::client_config::Env;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The current repository (or directory): files meant to be committed.
    Project,
    /// The user's own settings, for every project.
    User,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The resolved places an install reads and writes.
#[derive(Debug, Clone)]
pub struct Place {
    pub scope: Scope,
    /// The project root (project scope) or the home directory (user scope).
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Place {
    pub fn resolve(scope: Scope, env: &dyn Env, cwd: &Path) -> anyhow::Result<Place> {
        let home = env
            .var("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
        let root = match scope {
            Scope::Project => repository_root(cwd).unwrap_or_else(|| cwd.to_path_buf()),
            Scope::User => home.clone(),
        };
        Ok(Place { scope, root, home })
    }

    /// `root/rel` in project scope, `home/rel` in user scope (the two are the
    /// same directory layout for most agents).
    pub fn scoped(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// The nearest directory at or above `dir` holding `.git` (a directory, or the
/// file a worktree or submodule has): the checkout the agent opens.
pub fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}
