//! File lists without repeats.
//!
//! The digest drops exact repeats only; an agent names the same file in
//! several spellings (`/work/app/src/a.rs`, `src/a.rs`, `./src/a.rs`), which
//! listed an observation's file twice or three times. Paths are compared by
//! a key (the working directory, `./` and trailing `/` stripped, repeated
//! `/` collapsed) and the first spelling seen is kept.
//!
//! A file both read and modified in a turn stays in both of an observation's
//! lists: they are separate columns that the API matches and shows as such,
//! and "read before it was changed" is a fact. Summaries are prose, so there
//! a modified file is named once, under `completed` ("Modified: …"), and
//! left out of `investigated`'s "Read: …" (see [`read_not_modified`]).

use crate::generation::prompt::digest::Digest;

/// Removes repeats of one file under different spellings from both lists,
/// and names the files of the lines noted relative to `cwd`.
pub(super) fn dedup(digest: &mut Digest, cwd: Option<&str>) {
    digest.files_read = unique(&digest.files_read, cwd);
    digest.files_modified = unique(&digest.files_modified, cwd);
    // Lines noted say their files relative to the repository.
    if let Some(cwd) = cwd
        .map(|c| c.trim().trim_end_matches('/'))
        .filter(|c| !c.is_empty())
    {
        let under = format!("{cwd}/");
        for entry in &mut digest.noted {
            *entry = entry.replace(&under, "");
        }
    }
}

/// The files read that were not also modified, in order, as [`shown`].
pub(super) fn read_not_modified(digest: &Digest, cwd: Option<&str>) -> Vec<String> {
    let modified = shown(&digest.files_modified, cwd);
    shown(&digest.files_read, cwd)
        .into_iter()
        .filter(|p| !modified.contains(p))
        .collect()
}

/// The paths as text names them (titles, facts, summaries): relative to
/// the repository when under it, without `./` or repeated `/`. The file
/// columns keep the spelling the agent reported.
pub(super) fn shown(paths: &[String], cwd: Option<&str>) -> Vec<String> {
    paths.iter().map(|p| key(p, cwd)).collect()
}

fn unique(paths: &[String], cwd: Option<&str>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(paths.len());
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let key = key(path, cwd);
        if !keys.contains(&key) {
            keys.push(key);
            out.push(path.clone());
        }
    }
    out
}

/// The comparison key of `path`: relative to `cwd` when under it, without
/// `./`, repeated `/` or a trailing `/`.
fn key(path: &str, cwd: Option<&str>) -> String {
    let trimmed = path.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c == '/') {
        return "/".into();
    }
    let mut path = collapse(trimmed);
    if let Some(cwd) = cwd.map(|c| collapse(c.trim())) {
        let cwd = cwd.trim_end_matches('/');
        if !cwd.is_empty()
            && let Some(rest) = path.strip_prefix(cwd).and_then(|r| r.strip_prefix('/'))
        {
            path = rest.to_string();
        }
    }
    let mut rest = path.as_str();
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    let rest = rest.strip_suffix('/').filter(|r| !r.is_empty()).unwrap_or(rest);
    if rest.is_empty() {
        ".".into()
    } else {
        rest.to_string()
    }
}

/// `a//b/./c` → `a/b/c` (a leading `./` is kept for [`key`] to strip).
fn collapse(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, part) in path.split('/').enumerate() {
        if i > 0 && (part.is_empty() || part == ".") {
            continue;
        }
        if i > 0 {
            out.push('/');
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn spellings_of_one_file_are_listed_once() {
        let cwd = Some("/work/app/");
        let paths = list(&[
            "/work/app/src/a.rs",
            "src/a.rs",
            "./src/a.rs",
            "src//a.rs",
            "src/./a.rs",
            "src/b.rs",
            "/other/src/a.rs",
            "docs/",
            "docs",
        ]);
        assert_eq!(
            unique(&paths, cwd),
            list(&["/work/app/src/a.rs", "src/b.rs", "/other/src/a.rs", "docs/"])
        );
        assert_eq!(key("/", None), "/");
        assert_eq!(key("./", None), ".");
        assert_eq!(key("/work/app", cwd), "/work/app");
    }

    #[test]
    fn read_not_modified_leaves_out_modified_files() {
        let digest = Digest {
            files_read: list(&["/work/app/a.rs", "b.rs"]),
            files_modified: list(&["./a.rs"]),
            ..Digest::default()
        };
        assert_eq!(read_not_modified(&digest, Some("/work/app")), list(&["b.rs"]));
        let digest = Digest {
            files_read: list(&["/work/app/src/a.rs", "/work/app/./b.rs", "/etc/hosts"]),
            ..Digest::default()
        };
        assert_eq!(
            read_not_modified(&digest, Some("/work/app")),
            list(&["src/a.rs", "b.rs", "/etc/hosts"])
        );
    }

    #[test]
    fn lines_noted_name_their_files_relative_to_the_repository() {
        let mut digest = Digest {
            noted: list(&[
                "/work/app/config/gateway.toml: max_attempts = 7",
                "grep ttl: /work/app/src/config.rs:31: let ttl = 30;",
                "/other/x.toml: a = 1",
            ]),
            ..Digest::default()
        };
        dedup(&mut digest, Some("/work/app/"));
        assert_eq!(
            digest.noted,
            list(&[
                "config/gateway.toml: max_attempts = 7",
                "grep ttl: src/config.rs:31: let ttl = 30;",
                "/other/x.toml: a = 1",
            ])
        );
    }
}
