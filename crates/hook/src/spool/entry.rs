//! One spooled event: a JSON line `{"v":1,"agent","key","at","query","body"}`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub v: u32,
    /// The agent slug, as in `/v1/hooks/{agent}`.
    pub agent: String,
    /// The Idempotency-Key, made once per event.
    pub key: String,
    /// Epoch ms when the hook read the event (sent as `X-Cairn-Occurred-At`).
    pub at: i64,
    /// The query string, without `?`.
    pub query: String,
    /// The filtered hook body, kept byte for byte.
    pub body: Box<RawValue>,
}

impl Entry {
    pub fn new(agent: &str, key: &str, at: i64, query: &str, body: Box<RawValue>) -> Self {
        Self {
            v: VERSION,
            agent: agent.into(),
            key: key.into(),
            at,
            query: query.into(),
            body,
        }
    }

    /// The line as written to the file, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).expect("an entry always serializes");
        line.push(b'\n');
        line
    }

    /// A line of the file (without its newline); `None` for a torn, foreign
    /// or blank line, which readers skip.
    pub fn parse(line: &[u8]) -> Option<Self> {
        let entry: Entry = serde_json::from_slice(line).ok()?;
        (entry.v == VERSION && !entry.key.is_empty()).then_some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn a_line_round_trips_and_keeps_the_body_bytes() {
        let e = Entry::new("claude-code", "k1", 42, "cwd=%2Fa", body(r#"{"b": [1, 2]}"#));
        let line = e.to_line();
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        let back = Entry::parse(&line[..line.len() - 1]).unwrap();
        assert_eq!(
            (back.agent.as_str(), back.key.as_str(), back.at),
            ("claude-code", "k1", 42)
        );
        assert_eq!(back.query, "cwd=%2Fa");
        assert_eq!(back.body.get(), r#"{"b": [1, 2]}"#);
    }

    #[test]
    fn torn_blank_and_foreign_lines_are_not_entries() {
        let line = Entry::new("codex", "k", 1, "", body("{}")).to_line();
        assert!(Entry::parse(&line[..line.len() / 2]).is_none());
        assert!(Entry::parse(b"").is_none());
        assert!(Entry::parse(b"   ").is_none());
        assert!(Entry::parse(br#"{"v":2,"agent":"a","key":"k","at":1,"query":"","body":{}}"#).is_none());
        assert!(Entry::parse(br#"{"v":1,"agent":"a","key":"","at":1,"query":"","body":{}}"#).is_none());
        assert!(Entry::parse(b"[1,2]").is_none());
    }
}
