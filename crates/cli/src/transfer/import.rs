//! `cairn import --project <id|slug> < memory.jsonl`: JSON Lines sent to the
//! import route in requests of bounded size.
//!
//! Each request is all or nothing on the server. A record that refers to a
//! session sent in an earlier request carries that session's line again, so
//! every request stands alone; re-sent sessions are found already there and
//! are not counted. A failing request stops the import: the requests before
//! it stay written, and running the import again adds only what is missing.

use std::{
    collections::{HashMap, HashSet},
    fs::File,
    io::{BufRead, BufReader},
    path::Path,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SendOptions;
use crate::admin_api::{
    ApiArgs,
    client::{Api, ApiError, CutOff},
    segment,
};

/// What the import routes reported, summed over the requests.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub sessions: u64,
    pub observations: u64,
    pub summaries: u64,
}

#[derive(Debug, Default, Serialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub requests: u64,
    pub imported: Counts,
    pub existing: Counts,
}

/// One request's answer.
#[derive(Deserialize)]
struct Answer {
    imported: Counts,
    existing: Counts,
}

pub struct Sender<'a> {
    api: &'a Api,
    path: String,
    max_bytes: usize,
    body: String,
    /// What each line of `body` is, for error messages ("line 12", "observation 7").
    labels: Vec<String>,
    /// Which lines of `body` are sessions sent again for a later record.
    resent: Vec<bool>,
    sessions_in_body: HashSet<String>,
    resent_in_body: u64,
    /// Every session seen: id → (label, line).
    sessions: HashMap<String, (String, String)>,
    pub totals: Totals,
}

impl<'a> Sender<'a> {
    pub fn new(api: &'a Api, project: &str, options: &SendOptions) -> Self {
        Sender {
            api,
            path: format!("/v1/projects/{}/import", segment(project)),
            max_bytes: options.request_bytes.max(1024),
            body: String::new(),
            labels: Vec::new(),
            resent: Vec::new(),
            sessions_in_body: HashSet::new(),
            resent_in_body: 0,
            sessions: HashMap::new(),
            totals: Totals::default(),
        }
    }

    /// Queues one record line; sends a request when the next line would not fit.
    pub fn push(&mut self, label: String, line: &str) -> anyhow::Result<()> {
        let record: Value =
            serde_json::from_str(line).map_err(|e| anyhow::anyhow!("{label}: not a JSON record: {e}"))?;
        let kind = record["type"].as_str().unwrap_or_default();
        let id = record["id"].as_str().unwrap_or_default().to_string();
        let session_ref = match kind {
            "observation" | "summary" => record["sessionId"].as_str().map(str::to_string),
            _ => None,
        };
        if !self.body.is_empty()
            && self.body.len() + self.needed(session_ref.as_deref()) + line.len() + 1 > self.max_bytes
        {
            self.flush()?;
        }
        if let Some(s) = session_ref
            && !self.sessions_in_body.contains(&s)
            && let Some((session_label, session_line)) = self.sessions.get(&s).cloned()
        {
            self.append(session_label, &session_line, true);
            self.sessions_in_body.insert(s);
            self.resent_in_body += 1;
        }
        if kind == "session" {
            self.sessions
                .insert(id.clone(), (label.clone(), line.to_string()));
            self.sessions_in_body.insert(id);
        }
        self.append(label, line, false);
        Ok(())
    }

    /// Bytes of a session line this record would need re-sent in the current body.
    fn needed(&self, session: Option<&str>) -> usize {
        match session {
            Some(s) if !self.sessions_in_body.contains(s) => {
                self.sessions.get(s).map_or(0, |(_, l)| l.len() + 1)
            }
            _ => 0,
        }
    }

    fn append(&mut self, label: String, line: &str, resent: bool) {
        self.body.push_str(line.trim_end());
        self.body.push('\n');
        self.labels.push(label);
        self.resent.push(resent);
    }

    /// Sends what is queued.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        if self.body.is_empty() {
            return Ok(());
        }
        let answer = match self
            .api
            .post_bytes(&self.path, "application/x-ndjson", self.body.as_bytes())
        {
            Err(e) if is_too_large(&e) && self.labels.len() > 1 => return self.smaller(),
            Err(e) => return Err(self.relabel(e)),
            Ok(answer) => answer,
        };
        let answer: Answer = serde_json::from_value(answer)?;
        let t = &mut self.totals;
        t.requests += 1;
        add(&mut t.imported, answer.imported);
        add(&mut t.existing, answer.existing);
        t.existing.sessions = t.existing.sessions.saturating_sub(self.resent_in_body);
        self.clear();
        Ok(())
    }

    fn clear(&mut self) {
        self.body.clear();
        self.labels.clear();
        self.resent.clear();
        self.sessions_in_body.clear();
        self.resent_in_body = 0;
    }

    /// The server's body limit is under `--request-bytes`: halve the
    /// requests and send the queued lines again.
    fn smaller(&mut self) -> anyhow::Result<()> {
        self.max_bytes = (self.max_bytes / 2).max(1024);
        let body = std::mem::take(&mut self.body);
        let labels = std::mem::take(&mut self.labels);
        let resent = std::mem::take(&mut self.resent);
        self.clear();
        for ((line, label), resent) in body.lines().zip(labels).zip(resent) {
            if !resent {
                self.push(label, line)?;
            }
        }
        self.flush()
    }

    /// The server names lines of its request; name them as the input did.
    fn relabel(&self, e: anyhow::Error) -> anyhow::Error {
        let Some(api) = e.downcast_ref::<ApiError>() else {
            return e;
        };
        let written = if self.totals.requests > 0 {
            format!(
                " ({} earlier request(s) were written; running the import again after the fix adds only what is missing)",
                self.totals.requests
            )
        } else {
            String::new()
        };
        anyhow::anyhow!(
            "{}: {} (HTTP {}){written}",
            api.code,
            relabel_lines(&api.message, &self.labels),
            api.status
        )
    }
}

/// A 413, or a connection closed while the body was sent (a server refusing
/// a body over its limit may close before answering). Sending again in
/// smaller requests is safe: an import adds nothing twice.
fn is_too_large(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ApiError>().is_some_and(|a| a.status == 413) || e.downcast_ref::<CutOff>().is_some()
}

fn add(into: &mut Counts, c: Counts) {
    into.sessions += c.sessions;
    into.observations += c.observations;
    into.summaries += c.summaries;
}

/// `line N:` of a request → the label of its N-th line.
pub fn relabel_lines(message: &str, labels: &[String]) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let label = digits
            .parse::<usize>()
            .ok()
            .filter(|_| after[digits.len()..].starts_with(':'))
            .and_then(|n| labels.get(n.wrapping_sub(1)));
        match label {
            Some(label) => {
                out.push_str(label);
                rest = &after[digits.len()..];
            }
            None => {
                out.push_str("line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

pub fn print_totals(totals: &Totals, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(totals).unwrap_or_default());
        return;
    }
    let (i, e) = (totals.imported, totals.existing);
    println!(
        "imported {} session(s), {} observation(s), {} summary(ies); already there: {} session(s), {} observation(s), {} summary(ies) ({} request(s))",
        i.sessions, i.observations, i.summaries, e.sessions, e.observations, e.summaries, totals.requests
    );
}

pub fn run_file(
    input: Option<&Path>,
    project: &str,
    options: &SendOptions,
    args: &ApiArgs,
) -> anyhow::Result<()> {
    let api = args.api(Some(std::time::Duration::from_secs(120)))?;
    let reader: Box<dyn BufRead> = match input {
        Some(path) => Box::new(BufReader::new(File::open(path)?)),
        None => Box::new(BufReader::new(std::io::stdin().lock())),
    };
    let mut sender = Sender::new(&api, project, options);
    for (index, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        sender.push(format!("line {}", index + 1), &line)?;
    }
    sender.flush()?;
    print_totals(&sender.totals, args.json);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::relabel_lines;

    #[test]
    fn request_lines_are_named_as_the_input_named_them() {
        let labels = vec!["line 7".to_string(), "line 9".to_string()];
        assert_eq!(
            relabel_lines("2 bad line(s): line 1: x; line 2: y; the line 3: z", &labels),
            "2 bad line(s): line 7: x; line 9: y; the line 3: z"
        );
    }
}
