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
    /// The checkout's own git directory (its `index` and `HEAD`).
    pub git_dir: PathBuf,
    /// The checkout's `HEAD` commit, when it can be read from the files.
    pub head: Option<String>,
    /// The checked-out branch (none when `HEAD` is detached).
    pub branch: Option<String>,
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
        let (head, branch) = head(&git_dir, &common);
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
            git_dir,
            head,
            branch,
        });
    }
    None
}

/// `HEAD` of the worktree whose git directory is `git_dir`: a commit id
/// (detached), or `ref: refs/heads/<branch>` resolved through the loose ref
/// file or `packed-refs` of the shared directory.
pub fn head(git_dir: &Path, common: &Path) -> (Option<String>, Option<String>) {
    let Ok(text) = std::fs::read_to_string(git_dir.join("HEAD")) else {
        return (None, None);
    };
    let text = text.trim();
    let Some(reference) = text.strip_prefix("ref:").map(str::trim) else {
        return (commit_id(text), None);
    };
    let branch = reference.strip_prefix("refs/heads/").map(str::to_string);
    let loose = std::fs::read_to_string(common.join(reference))
        .or_else(|_| std::fs::read_to_string(git_dir.join(reference)))
        .ok()
        .and_then(|t| commit_id(t.trim()));
    let packed = || {
        let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
        packed.lines().find_map(|line| {
            let (id, name) = line.split_once(' ')?;
            (name.trim() == reference).then(|| commit_id(id)).flatten()
        })
    };
    (loose.or_else(packed), branch)
}

/// `text` when it is a commit id (40 or 64 hex digits), lowercased.
fn commit_id(text: &str) -> Option<String> {
    ((text.len() == 40 || text.len() == 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_ascii_lowercase())
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
    fn head_is_read_from_loose_refs_packed_refs_a_detached_head_and_a_worktree() {
        const A: &str = "0123456789abcdef0123456789abcdef01234567";
        const B: &str = "89abcdef0123456789abcdef0123456789abcdef";
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let git = base.join("app/.git");
        fs::create_dir_all(git.join("refs/heads/feat")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(git.join("refs/heads/main"), format!("{A}\n")).unwrap();
        let repo = discover(&base.join("app")).unwrap();
        assert_eq!(
            (repo.head.as_deref(), repo.branch.as_deref()),
            (Some(A), Some("main"))
        );

        // Packed: no loose file for the branch.
        fs::write(git.join("HEAD"), "ref: refs/heads/feat/x\n").unwrap();
        fs::write(
            git.join("packed-refs"),
            format!("# pack-refs with: peeled\n{B} refs/heads/feat/x\n"),
        )
        .unwrap();
        assert_eq!(head(&git, &git), (Some(B.into()), Some("feat/x".into())));

        // Detached, and upper case is normalised.
        fs::write(git.join("HEAD"), A.to_uppercase()).unwrap();
        assert_eq!(head(&git, &git), (Some(A.into()), None));

        // A branch with no commit yet; garbage in HEAD.
        fs::write(git.join("HEAD"), "ref: refs/heads/empty\n").unwrap();
        assert_eq!(head(&git, &git), (None, Some("empty".into())));
        fs::write(git.join("HEAD"), "not a ref").unwrap();
        assert_eq!(head(&git, &git), (None, None));

        // A linked worktree has its own HEAD and shares the refs.
        fs::create_dir_all(git.join("worktrees/w")).unwrap();
        fs::write(git.join("worktrees/w/commondir"), "../..").unwrap();
        fs::write(git.join("worktrees/w/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::create_dir_all(base.join("w")).unwrap();
        fs::write(
            base.join("w/.git"),
            format!("gitdir: {}", git.join("worktrees/w").display()),
        )
        .unwrap();
        let wt = discover(&base.join("w")).unwrap();
        assert_eq!(
            (wt.head.as_deref(), wt.branch.as_deref()),
            (Some(A), Some("main"))
        );
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
