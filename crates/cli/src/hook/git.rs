//! Repository identity of the hook's working directory, read from files
//! (`git` is never run): the `origin` URL and the main worktree's root, so
//! that subdirectories and linked worktrees of one repository look alike.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The main worktree's root (the parent of the main `.git`).
    pub root: PathBuf,
    /// `remote.origin.url`, when set.
    pub remote: Option<String>,
    /// The checkout the agent works in: the main root, or a linked worktree's own.
    pub worktree: PathBuf,
    /// The repository's shared git directory (`info/exclude` lives there).
    pub common_dir: PathBuf,
}

/// Walks up from `start` to the first `.git` (directory, or a file pointing
/// at a linked worktree's gitdir, whose `commondir` leads to the main one).
pub fn discover(start: &Path) -> Option<Repo> {
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            dir.join(target)
        };
        let common = common_dir(&git_dir);
        let root = if common.file_name().is_some_and(|n| n == ".git") {
            common
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| dir.to_path_buf())
        } else {
            // A bare repository's worktree, or a submodule: its own directory is the root.
            dir.to_path_buf()
        };
        let remote = std::fs::read_to_string(common.join("config"))
            .ok()
            .and_then(|c| origin_url(&c));
        return Some(Repo {
            root,
            remote,
            worktree: dir.to_path_buf(),
            common_dir: common,
        });
    }
    None
}

/// A linked worktree's gitdir names the shared one in `commondir` (often relative).
fn common_dir(git_dir: &Path) -> PathBuf {
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) if !text.trim().is_empty() => git_dir.join(text.trim()),
        _ => git_dir.to_path_buf(),
    };
    std::fs::canonicalize(&common).unwrap_or(common)
}

/// `url` of `[remote "origin"]` in a git config file: a minimal reading of
/// the ini dialect (sections, `key = value`, comments, quotes).
pub fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for raw in config.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            let header = line.trim_start_matches('[').split(']').next().unwrap_or("");
            let (section, sub) = header.split_once(char::is_whitespace).unwrap_or((header, ""));
            in_origin = section.eq_ignore_ascii_case("remote") && sub.trim() == "\"origin\"";
            continue;
        }
        if !in_origin || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("url") {
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            return Some(value.to_string()).filter(|v| !v.is_empty());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    const CONFIG: &str = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = git@x:up.git\n\
        [remote \"origin\"]\n\t# comment\n\tURL = \"git@github.com:acme/app.git\"\n\tfetch = +refs/heads/*\n";

    #[test]
    fn reads_the_origin_url_only() {
        assert_eq!(origin_url(CONFIG).as_deref(), Some("git@github.com:acme/app.git"));
        assert_eq!(origin_url("[remote \"upstream\"]\nurl = u\n"), None);
        assert_eq!(
            origin_url("[remote \"origin\"]\nurl=https://h/r.git"),
            Some("https://h/r.git".into())
        );
    }

    #[test]
    fn a_subdirectory_and_a_linked_worktree_resolve_to_the_main_root() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let main = base.join("app");
        fs::create_dir_all(main.join(".git/worktrees/feat")).unwrap();
        fs::create_dir_all(main.join("src/deep")).unwrap();
        fs::write(main.join(".git/config"), CONFIG).unwrap();
        // A linked worktree laid out as `git worktree add ../feat` does.
        let wt = base.join("feat");
        fs::create_dir_all(wt.join("lib")).unwrap();
        fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/feat").display()),
        )
        .unwrap();
        fs::write(main.join(".git/worktrees/feat/commondir"), "../..\n").unwrap();

        let in_main = discover(&main.join("src/deep")).unwrap();
        let in_worktree = discover(&wt.join("lib")).unwrap();
        for repo in [&in_main, &in_worktree] {
            assert_eq!(repo.root, main);
            assert_eq!(repo.remote.as_deref(), Some("git@github.com:acme/app.git"));
            assert_eq!(repo.common_dir, main.join(".git"));
        }
        assert_eq!((in_main.worktree, in_worktree.worktree), (main.clone(), wt));
    }

    #[test]
    fn a_relative_gitdir_and_no_remote() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("r/.git/worktrees/w")).unwrap();
        fs::write(base.join("r/.git/worktrees/w/commondir"), "../..").unwrap();
        fs::create_dir_all(base.join("w")).unwrap();
        fs::write(base.join("w/.git"), "gitdir: ../r/.git/worktrees/w").unwrap();
        let repo = discover(&base.join("w")).unwrap();
        assert_eq!(repo.root, base.join("r"));
        assert_eq!(repo.remote, None);
    }

    #[test]
    fn outside_any_repository() {
        let tmp = tempfile::tempdir().unwrap();
        // The temp dir is not inside a repository on any sane machine; guard anyway.
        if discover(tmp.path()).is_none() {
            assert_eq!(discover(&tmp.path().join("missing/dir")), None);
        }
    }
}
