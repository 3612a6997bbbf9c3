//! One file Cairn edits for an agent and what it puts there, as pure text
//! transformations: the text after install, after uninstall, and a
//! formatting-blind value to tell whether two versions differ in substance.

use std::path::PathBuf;

use serde_json::Value;

use super::{hooks::HookSet, json_edit, mcp};

#[derive(Debug, Clone)]
pub enum JsonEdit {
    Hooks(HookSet),
    /// `<key>.cairn` as a stdio MCP server running `<program> mcp`.
    Mcp {
        key: &'static str,
        program: String,
    },
}

#[derive(Debug, Clone)]
pub enum Kind {
    Json(Vec<JsonEdit>),
    /// Codex's `config.toml`: `[mcp_servers.cairn]`.
    CodexToml {
        program: String,
    },
}

#[derive(Debug, Clone)]
pub struct Target {
    pub path: PathBuf,
    pub kind: Kind,
}

impl Target {
    /// The file's text with Cairn's entries in place (`None`: no file yet).
    pub fn installed(&self, text: Option<&str>) -> anyhow::Result<String> {
        match &self.kind {
            Kind::Json(edits) => {
                let root = json_edit::parse(text)?;
                let obj = json_edit::root_object(&root)?;
                for edit in edits {
                    match edit {
                        JsonEdit::Hooks(set) => set.install(&obj)?,
                        JsonEdit::Mcp { key, program } => mcp::install_json(&obj, key, program)?,
                    }
                }
                Ok(with_final_newline(root.to_string(), text))
            }
            Kind::CodexToml { program } => {
                let mut doc = parse_toml(text)?;
                mcp::install_toml(&mut doc, program)?;
                Ok(doc.to_string())
            }
        }
    }

    /// The file's text with Cairn's entries taken out.
    pub fn uninstalled(&self, text: &str) -> anyhow::Result<String> {
        match &self.kind {
            Kind::Json(edits) => {
                let root = json_edit::parse(Some(text))?;
                let Ok(obj) = json_edit::root_object(&root) else {
                    return Ok(text.to_string());
                };
                for edit in edits {
                    match edit {
                        JsonEdit::Hooks(set) => set.uninstall(&obj),
                        JsonEdit::Mcp { key, .. } => mcp::uninstall_json(&obj, key),
                    }
                }
                Ok(root.to_string())
            }
            Kind::CodexToml { .. } => {
                let mut doc = parse_toml(Some(text))?;
                mcp::uninstall_toml(&mut doc);
                Ok(doc.to_string())
            }
        }
    }

    /// What the text says, formatting aside.
    pub fn substance(&self, text: &str) -> anyhow::Result<Value> {
        match &self.kind {
            Kind::Json(_) => Ok(json_edit::document_value(&json_edit::parse(Some(text))?)),
            Kind::CodexToml { .. } => {
                let table: toml::Table = toml::from_str(text)?;
                Ok(serde_json::to_value(table)?)
            }
        }
    }

    /// Whether `current` is, in substance, what installing into `original`
    /// gave, once Cairn's entries are out of both: then nobody else changed the
    /// file since, and uninstall may put the original bytes back.
    pub fn only_cairn_changed(&self, original: Option<&str>, current: &str) -> anyhow::Result<bool> {
        let expected = self.uninstalled(&self.installed(original)?)?;
        let now = self.uninstalled(current)?;
        Ok(self.substance(&expected)? == self.substance(&now)?)
    }
}

fn parse_toml(text: Option<&str>) -> anyhow::Result<toml_edit::DocumentMut> {
    Ok(text.unwrap_or("").parse::<toml_edit::DocumentMut>()?)
}

/// A file Cairn creates ends with a newline, as editors leave them.
fn with_final_newline(mut out: String, original: Option<&str>) -> String {
    if original.is_none_or(|t| t.trim().is_empty()) && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}
