//! The last assistant text of a Claude Code transcript (JSONL), read from
//! the file's tail only: for `Stop` events that lack `last_assistant_message`.

use std::{
    fs::File,
    io::{Read, Seek, SeekFrom},
    path::Path,
};

use serde_json::Value;

/// How much of the transcript's end is read.
pub const TAIL_BYTES: u64 = 256 * 1024;

pub fn last_assistant_text(path: &Path) -> Option<String> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::with_capacity((len - start) as usize);
    file.read_to_end(&mut tail).ok()?;
    last_in_tail(&tail, start > 0)
}

/// Scans lines from the end. When the tail starts mid-file its first line is
/// partial and skipped.
pub fn last_in_tail(tail: &[u8], partial_first: bool) -> Option<String> {
    let mut lines: Vec<&[u8]> = tail.split(|b| *b == b'\n').collect();
    if partial_first && !lines.is_empty() {
        lines.remove(0);
    }
    lines.into_iter().rev().find_map(assistant_text)
}

fn assistant_text(line: &[u8]) -> Option<String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let entry: Value = serde_json::from_slice(line).ok()?;
    let message = &entry["message"];
    let is_assistant = entry["type"] == "assistant" || message["role"] == "assistant";
    if !is_assistant {
        return None;
    }
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some(text).filter(|t| !t.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(parts: &str) -> String {
        format!(r#"{{"type":"assistant","message":{{"role":"assistant","content":{parts}}}}}"#)
    }

    #[test]
    fn takes_the_last_assistant_entry_with_text() {
        let t = [
            assistant(r#"[{"type":"text","text":"first"}]"#),
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#.to_string(),
            assistant(r#"[{"type":"thinking","thinking":"hm"},{"type":"text","text":"the answer"},{"type":"text","text":"part two"}]"#),
            assistant(r#"[{"type":"tool_use","id":"t","name":"Bash","input":{}}]"#),
            r#"{"type":"system","content":"x"}"#.to_string(),
            String::new(),
        ]
        .join("\n");
        assert_eq!(
            last_in_tail(t.as_bytes(), false).as_deref(),
            Some("the answer\npart two")
        );
    }

    #[test]
    fn a_partial_first_line_and_torn_last_line_are_skipped() {
        let whole = assistant(r#""plain string content""#);
        let t = format!("{}\n{whole}\n{{\"type\":\"assis", &whole[10..]);
        assert_eq!(
            last_in_tail(t.as_bytes(), true).as_deref(),
            Some("plain string content")
        );
        assert_eq!(last_in_tail(&whole.as_bytes()[10..], true), None);
        assert_eq!(last_in_tail(b"", false), None);
    }

    #[test]
    fn reads_only_the_tail_of_a_large_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.jsonl");
        let filler = assistant(&format!(r#"[{{"type":"text","text":"{}"}}]"#, "x".repeat(1000)));
        let mut text = String::new();
        for _ in 0..400 {
            text.push_str(&filler);
            text.push('\n');
        }
        text.push_str(&assistant(r#"[{"type":"text","text":"last words"}]"#));
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        assert_eq!(last_assistant_text(&path).as_deref(), Some("last words"));
        assert_eq!(last_assistant_text(&tmp.path().join("missing")), None);
    }
}
