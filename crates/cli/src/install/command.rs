//! The `cairn` command written into agents' files, and how Cairn recognises
//! its own entries again (so install can replace them and uninstall remove
//! them without touching anyone else's hooks).

use std::path::{Path, PathBuf};

use crate::{agent::Agent, client_config::Env};

/// The programs agents should run: plain `cairn` when that resolves on PATH
/// to this very binary (so a committed project file carries no
/// machine-specific path), else the absolute path of the running binary; and
/// for hooks the small `cairn-hook` when it sits beside this binary (named the
/// same way), else `cairn hook`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The path or name as an `exec` argument (MCP servers' `command`).
    pub exec: String,
    /// `cairn-hook`'s path or name, when it is installed beside `cairn`.
    pub hook_exec: Option<String>,
}

impl Program {
    pub fn detect(env: &dyn Env) -> anyhow::Result<Program> {
        let exe = std::env::current_exe()?;
        let exe = exe.canonicalize().unwrap_or(exe);
        let path: Vec<PathBuf> = env
            .var("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let exec = name_or_path(&exe, "cairn", &path);
        let hook = exe.with_file_name("cairn-hook");
        let hook_exec = hook.is_file().then(|| name_or_path(&hook, "cairn-hook", &path));
        Ok(Program { exec, hook_exec })
    }

    /// The program as a shell word (command hooks run through a shell).
    pub fn shell_word(&self) -> String {
        shell_quote(&self.exec)
    }

    /// `<cairn-hook> <agent>`, or `<cairn> hook <agent>` without it.
    pub fn hook_command(&self, agent: Agent) -> String {
        match &self.hook_exec {
            Some(hook) => format!("{} {}", shell_quote(hook), agent.slug()),
            None => format!("{} hook {}", self.shell_word(), agent.slug()),
        }
    }
}

/// `name` when the first `name` on PATH is `file` itself, else `file`'s path.
fn name_or_path(file: &Path, name: &str, path: &[PathBuf]) -> String {
    let first = path.iter().map(|dir| dir.join(name)).find(|c| c.is_file());
    if first.and_then(|c| c.canonicalize().ok()).as_deref() == Some(file) {
        name.to_string()
    } else {
        file.to_string_lossy().into_owned()
    }
}

fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Splits a command line into words, honouring single and double quotes and
/// backslashes: enough to read back what `hook_command` wrote, or a hand-edited
/// variant of it.
pub fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Whether `program` names a cairn binary (by file name, wherever it lives).
pub fn is_cairn_program(program: &str) -> bool {
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == "cairn" || n == "cairn.exe")
}

/// Whether a hook command is Cairn's own for this agent: exactly
/// `<…/cairn> hook <agent>` or `<…/cairn-hook> <agent>`.
pub fn is_cairn_hook(command: &str, agent: Agent) -> bool {
    let is_hook_program = |program: &str| {
        Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n == "cairn-hook" || n == "cairn-hook.exe")
    };
    match shell_words(command).as_deref() {
        Some([program, verb, name]) => is_cairn_program(program) && verb == "hook" && name == agent.slug(),
        Some([program, name]) => is_hook_program(program) && name == agent.slug(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_its_own_commands_only() {
        let plain = Program {
            exec: "cairn".into(),
            hook_exec: None,
        };
        let spaced = Program {
            exec: "/opt/my tools/cairn".into(),
            hook_exec: None,
        };
        let small = Program {
            exec: "cairn".into(),
            hook_exec: Some("/opt/my tools/cairn-hook".into()),
        };
        assert_eq!(
            small.hook_command(Agent::Codex),
            "'/opt/my tools/cairn-hook' codex"
        );
        assert!(!is_cairn_hook("cairn-hooks codex", Agent::Codex));
        assert!(!is_cairn_hook("cairn-hook codex", Agent::Cursor));
        for p in [&plain, &spaced, &small] {
            let cmd = p.hook_command(Agent::Cursor);
            assert!(is_cairn_hook(&cmd, Agent::Cursor), "{cmd}");
            assert!(!is_cairn_hook(&cmd, Agent::Codex), "{cmd}");
        }
        assert_eq!(
            spaced.hook_command(Agent::Gemini),
            "'/opt/my tools/cairn' hook gemini"
        );
        assert!(is_cairn_hook(
            "\"/usr/local/bin/cairn\" hook gemini",
            Agent::Gemini
        ));
        assert!(!is_cairn_hook("cairn-lint hook gemini", Agent::Gemini));
        assert!(!is_cairn_hook("cairn hook gemini --verbose", Agent::Gemini));
        assert!(!is_cairn_hook("echo cairn hook gemini", Agent::Gemini));
        assert!(!is_cairn_hook("'unterminated", Agent::Gemini));
    }
}
