//! The line spans of the files a job's tool events read and edited, and the
//! edits themselves, for memory tied to code.
//!
//! - Each observation's `file_refs` records, beside a file's version, the
//!   lines the turn saw of it (`lines`, end-of-turn numbering): a Read of
//!   part of a file (Claude Code's `tool_response.file`: `startLine`,
//!   `numLines`, `totalLines`) and the new side of each edit's hunks
//!   (`structuredPatch`). A file read whole or written whole has no spans:
//!   the memory is about all of it.
//! - The completion re-checks the project's older memories about a file the
//!   job edited against the job's edits: the hash of the file before its
//!   first edit (`originalFile`) and each edit's hunks. A memory drawn from
//!   that version whose lines no hunk touched stays live, its spans moved
//!   to the new numbering (SQL `file_refs_after_edits`, migration 0020).
//!
//! Paths are keyed as `file_versions` keys them: relative to the event's
//! working directory when under it.

use std::collections::BTreeMap;

use cairn_shared::paths::relative;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::generation::material::Material;

/// More spans than this in one file are merged into one.
const MAX_SPANS: usize = 8;

/// An inclusive range of 1-based line numbers.
pub type Span = (i64, i64);

/// One hunk of an edit: old start, old line count, new start, new line count.
type Hunk = [i64; 4];

/// What a job's events say about the lines of its files.
#[derive(Debug, Default)]
pub struct TurnCode {
    /// The session's working directory, for files an observation names.
    cwd: Option<String>,
    /// Spans per file; `None` when the job saw the file whole.
    spans: BTreeMap<String, Option<Vec<Span>>>,
    /// Per edited file: the hash before the first edit, and each edit's hunks.
    /// `before` is `None` when an edit had no hunks or no original (a Write,
    /// another agent's tool): the file changed in unknown places.
    edits: BTreeMap<String, FileEdits>,
}

#[derive(Debug)]
struct FileEdits {
    before: Option<String>,
    hunks: Vec<Vec<Hunk>>,
}

impl TurnCode {
    /// Reads the spans and edits of `material`'s tool results, in event order.
    pub fn of(material: &Material) -> TurnCode {
        let mut code = TurnCode {
            cwd: material.cwd.clone(),
            ..TurnCode::default()
        };
        for event in &material.events {
            let payload = &event.payload;
            let Some(response) = payload.get("tool_response").filter(|r| !r.is_null()) else {
                continue;
            };
            let Some(path) = file_path(payload) else {
                continue;
            };
            let cwd = payload["cwd"].as_str().or(material.cwd.as_deref());
            let key = relative(path, cwd).to_string();
            match event.tool_name.as_deref() {
                Some("Read") => code.read(key, response),
                Some("Edit" | "MultiEdit") => code.edited(key, response),
                Some("Write" | "NotebookEdit") => code.written(key),
                _ => {}
            }
        }
        code
    }

    fn read(&mut self, key: String, response: &Value) {
        let file = &response["file"];
        let (Some(start), Some(count)) = (file["startLine"].as_i64(), file["numLines"].as_i64()) else {
            self.spans.insert(key, None);
            return;
        };
        let total = file["totalLines"].as_i64().unwrap_or(i64::MAX);
        if (start <= 1 && count >= total) || count <= 0 {
            self.spans.insert(key, None);
            return;
        }
        self.add(key, (start.max(1), start.max(1) + count - 1));
    }

    fn edited(&mut self, key: String, response: &Value) {
        let hunks: Option<Vec<Hunk>> = response["structuredPatch"]
            .as_array()
            .filter(|h| !h.is_empty())
            .and_then(|hunks| hunks.iter().map(hunk).collect());
        let original = response["originalFile"].as_str();
        let (Some(hunks), Some(original)) = (hunks, original) else {
            self.written(key);
            return;
        };
        let edits = self.edits.entry(key.clone()).or_insert_with(|| FileEdits {
            before: Some(hex::encode(Sha256::digest(original.as_bytes()))),
            hunks: vec![],
        });
        edits.hunks.push(hunks.clone());
        let entry = self.spans.entry(key).or_insert_with(|| Some(vec![]));
        if let Some(spans) = entry {
            let mut moved: Vec<Span> = spans.iter().map(|&s| widen(s, &hunks)).collect();
            moved.extend(
                hunks
                    .iter()
                    .map(|h| (h[2].max(1), (h[2] + h[3] - 1).max(h[2].max(1)))),
            );
            *spans = merged(moved);
        }
    }

    fn written(&mut self, key: String) {
        self.spans.insert(key.clone(), None);
        self.edits.insert(
            key,
            FileEdits {
                before: None,
                hunks: vec![],
            },
        );
    }

    fn add(&mut self, key: String, span: Span) {
        let entry = self.spans.entry(key).or_insert_with(|| Some(vec![]));
        if let Some(spans) = entry {
            spans.push(span);
            *spans = merged(std::mem::take(spans));
        }
    }

    /// The spans of `file` (as an observation names it), for its `file_refs`
    /// entry: `None` when the job saw it whole or not at all.
    pub fn lines(&self, file: &str) -> Option<&[Span]> {
        self.spans
            .get(relative(file, self.cwd.as_deref()))
            .and_then(|s| s.as_deref())
            .filter(|s| !s.is_empty())
    }

    /// An observation's spans, keyed by the `file_versions` path of each of
    /// its files that has any: `{"src/a.rs": [[10, 20]]}`.
    pub fn lines_json<'a>(&self, files: impl Iterator<Item = &'a String>) -> Value {
        let mut out = serde_json::Map::new();
        for file in files {
            if let Some(spans) = self.lines(file) {
                let spans: Vec<Value> = spans.iter().map(|(a, b)| json!([a, b])).collect();
                out.insert(
                    relative(file, self.cwd.as_deref()).to_string(),
                    Value::Array(spans),
                );
            }
        }
        Value::Object(out)
    }

    /// The job's edits for the completion statement:
    /// `{"src/a.rs": {"before": <sha256 or null>, "hunks": [[[os, ol, ns, nl], …], …]}}`.
    pub fn edits_json(&self) -> Value {
        let map = self
            .edits
            .iter()
            .map(|(path, e)| (path.clone(), json!({ "before": e.before, "hunks": e.hunks })))
            .collect();
        Value::Object(map)
    }
}

/// The file a tool call was about.
fn file_path(payload: &Value) -> Option<&str> {
    let input = &payload["tool_input"];
    ["file_path", "notebook_path"]
        .iter()
        .find_map(|k| input[*k].as_str())
        .filter(|p| !p.is_empty())
}

fn hunk(h: &Value) -> Option<Hunk> {
    let n = |k: &str| h[k].as_i64().filter(|n| *n >= 0);
    Some([n("oldStart")?, n("oldLines")?, n("newStart")?, n("newLines")?])
}

/// A line of the old file after the edit: moved by the hunks before it; a
/// line inside a hunk maps to the hunk's new start (`end`: its new end).
fn map_line(line: i64, hunks: &[Hunk], end: bool) -> i64 {
    let mut delta = 0;
    for &[os, ol, ns, nl] in hunks {
        if ol > 0 && line >= os && line < os + ol {
            return if end { (ns + nl - 1).max(ns) } else { ns };
        }
        if (ol > 0 && os + ol <= line) || (ol == 0 && os < line) {
            delta += nl - ol;
        }
    }
    line + delta
}

/// A span of the old file in the new numbering, widened over any hunk it
/// overlaps (the memory is then about the changed lines too).
fn widen((a, b): Span, hunks: &[Hunk]) -> Span {
    let (a, b) = (map_line(a, hunks, false), map_line(b, hunks, true));
    (a.max(1), b.max(a.max(1)))
}

/// Sorted, overlapping and adjacent spans merged; past `MAX_SPANS`, one span
/// from the first line to the last.
fn merged(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    if out.len() > MAX_SPANS {
        let (first, last) = (out[0].0, out[out.len() - 1].1);
        out = vec![(first, last)];
    }
    out
}

#[cfg(test)]
#[path = "spans_tests.rs"]
mod tests;
