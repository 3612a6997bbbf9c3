//! Cairn's MCP server entry: `"cairn": {"command": "<cairn>", "args": ["mcp"]}`
//! under a JSON `mcpServers` object, or `[mcp_servers.cairn]` in Codex's TOML.
//! A stdio server: the token stays in Cairn's own config, never in these files.

use jsonc_parser::cst::CstObject;
use serde_json::Value;
use toml_edit::{Array, DocumentMut, Item, Table};

use super::{
    command::is_cairn_program,
    json_edit::{self, Json, value_of},
};

pub const SERVER_NAME: &str = "cairn";

/// Whether an MCP server entry (as a plain value) is the one Cairn writes.
pub fn is_ours(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str);
    let args = entry.get("args").and_then(Value::as_array);
    command.is_some_and(is_cairn_program)
        && args.is_some_and(|a| a.len() == 1 && a[0].as_str() == Some("mcp"))
}

fn entry(program: &str) -> Json {
    json_edit::object(vec![
        ("command", json_edit::string(program)),
        ("args", Json::Array(vec![json_edit::string("mcp")])),
    ])
}

/// Sets `<key>.cairn` (key: `mcpServers`), unless it already is exactly that.
pub fn install_json(root: &CstObject, key: &str, program: &str) -> anyhow::Result<()> {
    let servers = json_edit::child_object(root, key)?;
    let wanted = entry(program);
    match servers.get(SERVER_NAME) {
        Some(prop) if prop.value().map(|v| value_of(&v)) == Some(json_edit::to_value(&wanted)) => {}
        Some(prop) => prop.set_value(wanted),
        None => {
            servers.append(SERVER_NAME, wanted);
        }
    }
    Ok(())
}

/// Removes `<key>.cairn` when it is Cairn's, and `<key>` when that emptied it.
pub fn uninstall_json(root: &CstObject, key: &str) {
    let Some(servers_prop) = root.get(key) else { return };
    let Some(servers) = servers_prop.object_value() else {
        return;
    };
    let Some(prop) = servers.get(SERVER_NAME) else {
        return;
    };
    if !prop.value().is_some_and(|v| is_ours(&value_of(&v))) {
        return;
    }
    prop.remove();
    if servers.properties().is_empty() {
        servers_prop.remove();
    }
}

/// Sets `[mcp_servers.cairn]` in a Codex `config.toml`.
pub fn install_toml(doc: &mut DocumentMut, program: &str) -> anyhow::Result<()> {
    let root = doc.as_table_mut();
    if !root.contains_key("mcp_servers") {
        // Implicit: only `[mcp_servers.cairn]` appears, no empty parent header.
        let mut parent = Table::new();
        parent.set_implicit(true);
        root.insert("mcp_servers", Item::Table(parent));
    }
    let servers = root["mcp_servers"]
        .as_table_like_mut()
        .ok_or_else(|| anyhow::anyhow!("`mcp_servers` is not a table; not touching it"))?;
    if servers
        .get(SERVER_NAME)
        .is_some_and(|item| toml_is(item, program))
    {
        return Ok(());
    }
    let mut table = Table::new();
    table.insert("command", toml_edit::value(program));
    let mut args = Array::new();
    args.push("mcp");
    table.insert("args", toml_edit::value(args));
    servers.insert(SERVER_NAME, Item::Table(table));
    Ok(())
}

/// Removes `[mcp_servers.cairn]` when it is Cairn's, and `mcp_servers` when
/// that emptied it.
pub fn uninstall_toml(doc: &mut DocumentMut) {
    let root = doc.as_table_mut();
    let Some(servers) = root.get_mut("mcp_servers").and_then(Item::as_table_like_mut) else {
        return;
    };
    let ours = servers
        .get(SERVER_NAME)
        .is_some_and(|item| toml_value(item).is_some_and(|v| is_ours(&v)));
    if !ours {
        return;
    }
    servers.remove(SERVER_NAME);
    if servers.is_empty() {
        root.remove("mcp_servers");
    }
}

fn toml_is(item: &Item, program: &str) -> bool {
    toml_value(item) == Some(json_edit::to_value(&entry(program)))
}

/// A TOML item as a plain JSON value (tables and inline tables alike).
fn toml_value(item: &Item) -> Option<Value> {
    match item {
        Item::Value(v) => toml_plain(v),
        Item::Table(t) => Some(Value::Object(
            t.iter()
                .filter_map(|(k, i)| Some((k.to_string(), toml_value(i)?)))
                .collect(),
        )),
        Item::ArrayOfTables(a) => Some(Value::Array(
            a.iter()
                .map(|t| toml_value(&Item::Table(t.clone())))
                .collect::<Option<_>>()?,
        )),
        Item::None => None,
    }
}

fn toml_plain(v: &toml_edit::Value) -> Option<Value> {
    use toml_edit::Value as T;
    Some(match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => Value::from(*f.value()),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_plain).collect::<Option<_>>()?),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| Some((k.to_string(), toml_plain(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}
