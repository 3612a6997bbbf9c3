//! Windsurf takes memory as a rules file, not a hook answer:
//! `<workspace>/.windsurf/rules/cairn-memory.md`, rewritten only on change.

use std::{io::Write, path::Path};

const FRONTMATTER: &str = "---\ntrigger: always_on\n---\n";

/// Writes the rules file atomically when its content differs; true when written.
pub fn write_rules(workspace: &Path, markdown: &str) -> std::io::Result<bool> {
    let dir = workspace.join(".windsurf").join("rules");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_once_per_content() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(write_rules(tmp.path(), "# Memory\n- a\n").unwrap());
        let path = tmp.path().join(".windsurf/rules/cairn-memory.md");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "---\ntrigger: always_on\n---\n# Memory\n- a\n"
        );
        assert!(!write_rules(tmp.path(), "# Memory\n- a\n").unwrap());
        assert!(write_rules(tmp.path(), "# Memory\n- b\n").unwrap());
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
