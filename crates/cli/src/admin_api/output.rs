//! How the admin commands print: a table of chosen fields, or the JSON.

use comfy_table::{Table, presets::NOTHING};
use serde_json::Value;

/// One column: its header and how to show a row's value.
pub struct Column {
    pub header: &'static str,
    pub show: fn(&Value) -> String,
}

pub fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

pub fn print_table(rows: &[Value], columns: &[Column]) {
    let mut table = Table::new();
    table.load_preset(NOTHING);
    table.set_header(columns.iter().map(|c| c.header));
    for row in rows {
        table.add_row(columns.iter().map(|c| (c.show)(row)));
    }
    println!("{table}");
}

/// A string field, or `-`.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// An epoch-ms field as a UTC time, or `-`.
pub fn time(v: &Value) -> String {
    v.as_i64()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".into())
}

/// At most `n` characters, on one line.
pub fn short(s: &str, n: usize) -> String {
    let one_line = s.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= n {
        one_line
    } else {
        one_line.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}
