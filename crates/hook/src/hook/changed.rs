//! The files changed in the worktree, read from git's own index (`git` is
//! never run): each tracked file whose size or modification time differs
//! from what the index recorded, or that is gone, or in conflict. Sent at a
//! session's start so that its context leads with memories of the work at
//! hand. Untracked files are not seen (that would mean walking the tree).
//!
//! Bounded: at most [`MAX_ENTRIES`] index entries are compared, and the
//! [`MAX_CHANGED`] most recently modified changes are kept.

use std::path::Path;

/// Index entries compared at most (a checkout of this many files takes a
/// few milliseconds of `lstat`s).
pub const MAX_ENTRIES: usize = 50_000;
/// Changed files reported at most, the most recently modified first.
pub const MAX_CHANGED: usize = 20;

/// One entry of the index: its path and the stat data git compares.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    path: String,
    mtime: (u32, u32),
    size: u32,
    stage: u8,
    skip_worktree: bool,
}

/// The changed files of the worktree at `worktree` whose git directory is
/// `git_dir`, relative to the worktree, most recently modified first; empty
/// when the index cannot be read.
pub fn files(worktree: &Path, git_dir: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(git_dir.join("index")) else {
        return vec![];
    };
    let Some(entries) = parse(&bytes) else {
        return vec![];
    };
    let mut changed: Vec<(i64, String)> = Vec::new();
    for e in entries.into_iter().take(MAX_ENTRIES) {
        if e.skip_worktree {
            continue;
        }
        let seen = stat(&worktree.join(&e.path));
        let modified = match seen {
            None => Some(i64::MAX),
            Some((mtime, size)) if e.stage != 0 || mtime != e.mtime || size != e.size => Some(mtime.0 as i64),
            Some(_) => None,
        };
        if let Some(at) = modified
            && !changed.iter().any(|(_, p)| *p == e.path)
        {
            changed.push((at, e.path));
        }
    }
    changed.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    changed.truncate(MAX_CHANGED);
    changed.into_iter().map(|(_, p)| p).collect()
}

/// Modification time (seconds, nanoseconds) and size as the index keeps
/// them (32 bits each), of the file itself (a symlink is not followed).
#[cfg(unix)]
fn stat(path: &Path) -> Option<((u32, u32), u32)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some(((m.mtime() as u32, m.mtime_nsec() as u32), m.size() as u32))
}

#[cfg(not(unix))]
fn stat(_path: &Path) -> Option<((u32, u32), u32)> {
    None
}

/// The entries of an index file (versions 2, 3 and 4; SHA-1 object ids),
/// or `None` when it is not one.
fn parse(bytes: &[u8]) -> Option<Vec<Entry>> {
    let u32_at =
        |at: usize| -> Option<u32> { Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?)) };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut entries = Vec::with_capacity(count.min(MAX_ENTRIES));
    let mut at = 12;
    let mut previous = String::new();
    for _ in 0..count.min(MAX_ENTRIES) {
        let start = at;
        let mtime = (u32_at(at + 8)?, u32_at(at + 12)?);
        let size = u32_at(at + 36)?;
        let flags = u16::from_be_bytes(bytes.get(at + 60..at + 62)?.try_into().ok()?);
        at += 62;
        let mut skip_worktree = false;
        if flags & 0x4000 != 0 && version >= 3 {
            let extended = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
            skip_worktree = extended & 0x4000 != 0;
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(bytes.get(at..)?)?;
            at += used;
            let end = at + bytes.get(at..)?.iter().position(|b| *b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous.get(..keep)?.to_string();
            path.push_str(std::str::from_utf8(&bytes[at..end]).ok()?);
            at = end + 1;
            path
        } else {
            let end = at + bytes.get(at..)?.iter().position(|b| *b == 0)?;
            let path = std::str::from_utf8(&bytes[at..end]).ok()?.to_string();
            // Padded with 1–8 NULs to a multiple of 8 bytes from the entry's start.
            at = start + (end - start + 8) / 8 * 8;
            path
        };
        previous.clone_from(&path);
        entries.push(Entry {
            path,
            mtime,
            size,
            stage: ((flags >> 12) & 0x3) as u8,
            skip_worktree,
        });
    }
    Some(entries)
}

/// Git's offset varint (`varint.c`): 7 bits a byte, high bit = more, each
/// continuation adding one. Returns the value and the bytes read.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut c = *bytes.first()?;
    let mut value = (c & 0x7f) as usize;
    while c & 0x80 != 0 {
        used += 1;
        c = *bytes.get(used)?;
        value = value.checked_add(1)?.checked_shl(7)? + (c & 0x7f) as usize;
    }
    Some((value, used + 1))
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A repository of `files`, committed, then the index at `version`.
    fn repo(files: &[&str], version: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("content of {f}\n")).unwrap();
        }
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-qm", "init"]);
        git(dir.path(), &["update-index", "--index-version", version]);
        // Past git's racy window: a same-second write must still show as a change.
        git(dir.path(), &["update-index", "--really-refresh"]);
        dir
    }

    #[test]
    fn modified_and_deleted_files_are_found_in_every_index_version() {
        let names = [
            "README.md",
            "src/auth/session.ts",
            "src/auth/token.ts",
            "src/db/pool.rs",
        ];
        for version in ["2", "3", "4"] {
            let dir = repo(&names, version);
            assert_eq!(
                files(dir.path(), &dir.path().join(".git")),
                Vec::<String>::new(),
                "v{version}: clean"
            );
            std::fs::write(
                dir.path().join("src/auth/session.ts"),
                "changed, and longer than before\n",
            )
            .unwrap();
            std::fs::remove_file(dir.path().join("src/db/pool.rs")).unwrap();
            let mut found = files(dir.path(), &dir.path().join(".git"));
            found.sort();
            assert_eq!(found, ["src/auth/session.ts", "src/db/pool.rs"], "v{version}");
        }
    }

    #[test]
    fn the_newest_changes_are_kept_when_there_are_many() {
        let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = repo(&refs, "2");
        for (i, name) in names.iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("edited {i} with more text\n")).unwrap();
            let at =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(2_000_000_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
        let found = files(dir.path(), &dir.path().join(".git"));
        assert_eq!(found.len(), MAX_CHANGED);
        assert_eq!(found[0], "f29.txt");
        assert_eq!(found[MAX_CHANGED - 1], "f10.txt");
    }

    #[test]
    fn not_an_index_is_nothing() {
        assert_eq!(parse(b"not an index at all"), None);
        assert_eq!(parse(b"DIRC\0\0\0\x09\0\0\0\0"), None);
        // Truncated inside its one entry.
        assert_eq!(parse(b"DIRC\0\0\0\x02\0\0\0\x01\0\0"), None);
        let dir = tempfile::tempdir().unwrap();
        assert!(files(dir.path(), dir.path()).is_empty());
    }

    #[test]
    fn varints_decode_as_git_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81, 0x7f]), Some((((1 + 1) << 7) + 127, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
