//! Windsurf takes memory as a rules file, not a hook answer:
//! `<workspace>/.windsurf/rules/cairn-memory.md`, rewritten only on change.
//! The team's memory is not the repository's content: the file is listed in
//! the repository's local `info/exclude`, so it is never committed by mistake.

use std::{io::Write, path::Path};

use super::event::Workspace;

const FRONTMATTER: &str = "---\ntrigger: always_on\n---\n";
const RULES_FILE: &str = ".windsurf/rules/cairn-memory.md";

/// Writes the rules file atomically when its content differs; true when written.
pub fn write_rules(workspace: &Workspace, markdown: &str) -> std::io::Result<bool> {
    if let Some(git) = &workspace.git_common_dir {
        exclude(git)?;
    }
    let dir = workspace.root.join(".windsurf").join("rules");
    let path = dir.join("cairn-memory.md");
    let content = format!("{FRONTMATTER}{markdown}");
    if std::fs::read(&path).is_ok_and(|old| old == content.as_bytes()) {
        return Ok(false);
    }
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".cairn-memory.md.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(content.as_bytes())?;
    file.sync_data()?;
    std::fs::rename(&tmp, &path)?;
    Ok(true)
}

/// Adds the rules file to `<git dir>/info/exclude` unless it is there.
fn exclude(git_dir: &Path) -> std::io::Result<()> {
    let path = git_dir.join("info").join("exclude");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let line = format!("/{RULES_FILE}");
    if current.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    std::fs::create_dir_all(git_dir.join("info"))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let separator = if current.is_empty() || current.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    writeln!(
        file,
        "{separator}# Cairn's memory for Windsurf (cairn hook windsurf)\n{line}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(root: &Path, git: Option<&Path>) -> Workspace {
        Workspace {
            root: root.to_path_buf(),
            git_common_dir: git.map(Path::to_path_buf),
        }
    }

    #[test]
    fn the_rules_file_is_excluded_from_git_once() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join(".git");
        std::fs::create_dir_all(git.join("info")).unwrap();
        std::fs::write(
            git.join("info/exclude"),
            "# git ls-files --others --exclude-from=.git/info/exclude\n*.log",
        )
        .unwrap();
        let ws = workspace(tmp.path(), Some(&git));
        assert!(write_rules(&ws, "a").unwrap());
        assert!(write_rules(&ws, "b").unwrap());
        let exclude = std::fs::read_to_string(git.join("info/exclude")).unwrap();
        assert!(exclude.starts_with("# git ls-files"), "kept: {exclude}");
        assert!(exclude.contains("*.log\n# Cairn"), "{exclude}");
        assert_eq!(exclude.matches("/.windsurf/rules/cairn-memory.md").count(), 1);
    }

    #[test]
    fn writes_once_per_content() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = workspace(tmp.path(), None);
        assert!(write_rules(&ws, "# Memory\n- a\n").unwrap());
        let path = tmp.path().join(".windsurf/rules/cairn-memory.md");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "---\ntrigger: always_on\n---\n# Memory\n- a\n"
        );
        assert!(!write_rules(&ws, "# Memory\n- a\n").unwrap());
        assert!(write_rules(&ws, "# Memory\n- b\n").unwrap());
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
