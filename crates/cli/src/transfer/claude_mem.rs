//! `cairn import claude-mem <sqlite file> --project <id|slug>`: claude-mem's
//! local history (its `sdk_sessions`, `observations` and `session_summaries`
//! tables, as `src/services/sqlite/SessionStore.ts` creates and migrates
//! them) mapped onto the import format and sent to the import route.
//!
//! Ids are derived from claude-mem's own keys (UUID v5), so a second run
//! sends the same records and adds nothing. Older databases lack some
//! columns; those read as empty. `user_prompts` is not memory in Cairn (a
//! prompt is an event) and is left out; a session keeps its first prompt in
//! its metadata.

use std::{collections::HashMap, path::Path};

use rusqlite::{Connection, OpenFlags, types::Value as Sql};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::{
    SendOptions,
    import::{Sender, print_totals},
};
use crate::admin_api::ApiArgs;

/// The namespace of ids derived from claude-mem's keys.
fn namespace() -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, b"https://github.com/thedotmack/claude-mem")
}

fn derived(kind: &str, key: &str) -> Uuid {
    Uuid::new_v5(&namespace(), format!("{kind}:{key}").as_bytes())
}

/// Records built from the database, in the order the import needs them.
#[derive(Default)]
pub struct Converted {
    pub records: Vec<(String, Value)>,
    /// Summaries whose session is not in the database: nothing to attach them to.
    pub orphan_summaries: u64,
}

pub fn run(
    file: &Path,
    project: &str,
    only_project: Option<&str>,
    options: &SendOptions,
    args: &ApiArgs,
) -> anyhow::Result<()> {
    let converted = read(file, only_project)?;
    let api = args.api(Some(std::time::Duration::from_secs(120)))?;
    let mut sender = Sender::new(&api, project, options);
    for (label, record) in &converted.records {
        sender.push(label.clone(), &record.to_string())?;
    }
    sender.flush()?;
    print_totals(&sender.totals, args.json);
    if converted.orphan_summaries > 0 {
        eprintln!(
            "left out {} summary(ies) whose session is not in the claude-mem database",
            converted.orphan_summaries
        );
    }
    Ok(())
}

/// Reads a claude-mem database (read-only) into import records.
pub fn read(file: &Path, only_project: Option<&str>) -> anyhow::Result<Converted> {
    let db = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", file.display()))?;
    for table in ["sdk_sessions", "observations", "session_summaries"] {
        if columns(&db, table)?.is_empty() {
            anyhow::bail!(
                "{} is not a claude-mem database: no `{table}` table",
                file.display()
            );
        }
    }
    let keep = |row: &Row| only_project.is_none_or(|p| row.text("project").as_deref() == Some(p));
    let mut out = Converted::default();
    // claude-mem's memory_session_id → the Cairn session id.
    let mut sessions: HashMap<String, Uuid> = HashMap::new();
    for row in rows(&db, "sdk_sessions", SESSION_COLUMNS)? {
        if !keep(&row) {
            continue;
        }
        let (id, record) = session(&row);
        if let Some(memory) = row.text("memory_session_id") {
            sessions.insert(memory, id);
        }
        out.records
            .push((format!("sdk_sessions id {}", row.int("id").unwrap_or(0)), record));
    }
    for row in rows(&db, "observations", OBSERVATION_COLUMNS)? {
        if keep(&row) {
            let label = format!("observations id {}", row.int("id").unwrap_or(0));
            out.records.push((label, observation(&row, &sessions)));
        }
    }
    for row in rows(&db, "session_summaries", SUMMARY_COLUMNS)? {
        if !keep(&row) {
            continue;
        }
        let label = format!("session_summaries id {}", row.int("id").unwrap_or(0));
        match summary(&row, &sessions) {
            Some(record) => out.records.push((label, record)),
            None => out.orphan_summaries += 1,
        }
    }
    Ok(out)
}

const SESSION_COLUMNS: &[&str] = &[
    "id",
    "content_session_id",
    "memory_session_id",
    "project",
    "platform_source",
    "user_prompt",
    "started_at_epoch",
    "completed_at_epoch",
    "status",
    "custom_title",
    "prompt_counter",
];
const OBSERVATION_COLUMNS: &[&str] = &[
    "id",
    "memory_session_id",
    "project",
    "text",
    "type",
    "title",
    "subtitle",
    "facts",
    "narrative",
    "concepts",
    "files_read",
    "files_modified",
    "prompt_number",
    "discovery_tokens",
    "created_at_epoch",
    "content_hash",
    "generated_by_model",
    "agent_type",
    "agent_id",
    "metadata",
];
const SUMMARY_COLUMNS: &[&str] = &[
    "id",
    "memory_session_id",
    "project",
    "request",
    "investigated",
    "learned",
    "completed",
    "next_steps",
    "files_read",
    "files_edited",
    "notes",
    "prompt_number",
    "created_at_epoch",
];

/// A row by column name; columns the database lacks read as NULL.
struct Row(HashMap<&'static str, Sql>);

impl Row {
    fn text(&self, column: &str) -> Option<String> {
        match self.0.get(column)? {
            Sql::Text(s) => Some(s.clone()).filter(|s| !s.is_empty()),
            Sql::Integer(i) => Some(i.to_string()),
            Sql::Real(r) => Some(r.to_string()),
            _ => None,
        }
    }
    fn int(&self, column: &str) -> Option<i64> {
        match self.0.get(column)? {
            Sql::Integer(i) => Some(*i),
            Sql::Text(s) => s.trim().parse().ok(),
            Sql::Real(r) => Some(*r as i64),
            _ => None,
        }
    }
    fn string(&self, column: &str) -> String {
        self.text(column).unwrap_or_default()
    }
    /// claude-mem keeps lists as JSON arrays in text; a bare string is one item.
    fn list(&self, column: &str) -> Vec<String> {
        let Some(text) = self.text(column) else {
            return Vec::new();
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(items)) => items
                .into_iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
                .filter(|s| !s.trim().is_empty())
                .collect(),
            _ => vec![text],
        }
    }
    /// Epoch milliseconds (a value small enough to be seconds is taken as seconds).
    fn epoch_ms(&self, column: &str) -> Option<i64> {
        self.int(column)
            .map(|t| if t.abs() < 100_000_000_000 { t * 1000 } else { t })
    }
}

fn columns(db: &Connection, table: &str) -> anyhow::Result<Vec<String>> {
    let mut statement = db.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = statement.query_map([table], |r| r.get::<_, String>(0))?;
    Ok(names.collect::<Result<_, _>>()?)
}

fn rows(db: &Connection, table: &str, wanted: &[&'static str]) -> anyhow::Result<Vec<Row>> {
    let present = columns(db, table)?;
    let select: Vec<String> = wanted
        .iter()
        .map(|c| {
            if present.iter().any(|p| p == c) {
                format!("\"{c}\"")
            } else {
                format!("NULL AS \"{c}\"")
            }
        })
        .collect();
    let sql = format!("SELECT {} FROM \"{table}\" ORDER BY id", select.join(", "));
    let mut statement = db.prepare(&sql)?;
    let rows = statement.query_map([], |r| {
        let mut row = HashMap::new();
        for (i, c) in wanted.iter().enumerate() {
            row.insert(*c, r.get::<_, Sql>(i)?);
        }
        Ok(Row(row))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Drops nulls and empty strings from claude-mem's own fields kept in metadata.
fn compact(fields: Vec<(&str, Value)>) -> Value {
    let map: Map<String, Value> = fields
        .into_iter()
        .filter(|(_, v)| !(v.is_null() || v.as_str().is_some_and(str::is_empty)))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    Value::Object(map)
}

/// claude-mem's `platform_source` (`claude`, `cursor`, …) as a Cairn agent.
fn agent(platform: Option<&str>) -> String {
    match platform {
        None | Some("claude") | Some("claude-code") => "claude-code".into(),
        Some(other) => other.to_string(),
    }
}

fn session(row: &Row) -> (Uuid, Value) {
    let platform = row.text("platform_source");
    let content = row
        .text("content_session_id")
        .or_else(|| row.text("memory_session_id"))
        .unwrap_or_else(|| format!("claude-mem-{}", row.int("id").unwrap_or(0)));
    let id = derived(
        "session",
        &format!("{}:{content}", platform.as_deref().unwrap_or("claude")),
    );
    let started = row.epoch_ms("started_at_epoch").unwrap_or(0);
    let ended = row.epoch_ms("completed_at_epoch");
    let status = if row.text("status").as_deref() == Some("active") && ended.is_none() {
        "active"
    } else {
        "ended"
    };
    let metadata = json!({
        "source": "claude-mem",
        "claudeMem": compact(vec![
            ("id", row.int("id").into()),
            ("memorySessionId", row.text("memory_session_id").into()),
            ("project", row.text("project").into()),
            ("userPrompt", row.text("user_prompt").into()),
            ("customTitle", row.text("custom_title").into()),
            ("status", row.text("status").into()),
            ("promptCounter", row.int("prompt_counter").into()),
        ]),
    });
    let record = json!({
        "type": "session",
        "id": id,
        "agent": agent(platform.as_deref()),
        "externalSessionId": content.chars().take(256).collect::<String>(),
        "contentSessionId": row.text("content_session_id"),
        "platformSource": platform,
        "status": status,
        "metadata": metadata,
        "startedAtEpoch": started,
        "endedAtEpoch": ended,
    });
    (id, record)
}

fn observation(row: &Row, sessions: &HashMap<String, Uuid>) -> Value {
    let memory = row.string("memory_session_id");
    let id = derived("observation", &format!("{memory}:{}", row.int("id").unwrap_or(0)));
    let text = row.string("text");
    let title = row.text("title").unwrap_or_else(|| {
        text.lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect()
    });
    let own_metadata = row
        .text("metadata")
        .and_then(|m| serde_json::from_str::<Value>(&m).ok())
        .unwrap_or(Value::Null);
    let metadata = json!({
        "source": "claude-mem",
        "claudeMem": compact(vec![
            ("id", row.int("id").into()),
            ("memorySessionId", Value::from(memory.clone())),
            ("project", row.text("project").into()),
            ("discoveryTokens", row.int("discovery_tokens").into()),
            ("contentHash", row.text("content_hash").into()),
            ("agentType", row.text("agent_type").into()),
            ("agentId", row.text("agent_id").into()),
            ("metadata", own_metadata),
        ]),
    });
    json!({
        "type": "observation",
        "id": id,
        "sessionId": sessions.get(&memory),
        "origin": "generated",
        "kind": row.text("type").unwrap_or_else(|| "discovery".into()).chars().take(100).collect::<String>(),
        "title": title,
        "subtitle": row.string("subtitle"),
        "facts": row.list("facts"),
        "narrative": row.string("narrative"),
        "concepts": row.list("concepts"),
        "filesRead": row.list("files_read"),
        "filesModified": row.list("files_modified"),
        "content": text,
        "metadata": metadata,
        "model": row.text("generated_by_model"),
        "promptNumber": row.int("prompt_number").and_then(|n| i32::try_from(n).ok()),
        "createdAtEpoch": row.epoch_ms("created_at_epoch").unwrap_or(0),
    })
}

fn summary(row: &Row, sessions: &HashMap<String, Uuid>) -> Option<Value> {
    let memory = row.string("memory_session_id");
    let session = sessions.get(&memory)?;
    let id = derived("summary", &format!("{memory}:{}", row.int("id").unwrap_or(0)));
    // Cairn's summaries have no file lists: they go into the notes.
    let mut notes = row.string("notes");
    for (label, column) in [("Files read", "files_read"), ("Files edited", "files_edited")] {
        let files = row.list(column);
        if !files.is_empty() {
            if !notes.is_empty() {
                notes.push('\n');
            }
            notes.push_str(&format!("{label}: {}", files.join(", ")));
        }
    }
    let prompt_number = row.int("prompt_number").and_then(|n| i32::try_from(n).ok());
    Some(json!({
        "type": "summary",
        "id": id,
        "sessionId": session,
        "scope": if prompt_number.is_some() { "turn" } else { "session" },
        "promptNumber": prompt_number,
        "request": row.string("request"),
        "investigated": row.string("investigated"),
        "learned": row.string("learned"),
        "completed": row.string("completed"),
        "nextSteps": row.string("next_steps"),
        "notes": notes,
        "createdAtEpoch": row.epoch_ms("created_at_epoch").unwrap_or(0),
    }))
}
