//! Format-preserving JSON (and JSONC) editing over `jsonc-parser`'s concrete
//! syntax tree: what Cairn adds takes the file's own indentation, and what it
//! does not touch keeps its bytes, comments and key order.

use anyhow::{Context, bail};
use jsonc_parser::{
    ParseOptions,
    cst::{CstInputValue, CstNode, CstObject, CstRootNode},
};
use serde_json::Value;

/// An ordered JSON value to insert (serde_json's map would sort the keys).
pub type Json = CstInputValue;

pub fn string(s: &str) -> Json {
    Json::String(s.to_string())
}

pub fn number(n: u64) -> Json {
    Json::Number(n.to_string())
}

pub fn object(props: Vec<(&str, Json)>) -> Json {
    Json::Object(props.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The value `j` denotes, for comparing with what a file holds.
pub fn to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        Json::Object(props) => Value::Object(props.iter().map(|(k, v)| (k.clone(), to_value(v))).collect()),
    }
}

/// Parses a document; an absent or blank file is an empty object.
pub fn parse(text: Option<&str>) -> anyhow::Result<CstRootNode> {
    let text = match text {
        Some(t) if !t.trim().is_empty() => t,
        _ => "{}\n",
    };
    // Comments and trailing commas are accepted (Gemini's and VS Code-style
    // settings files have them); the rest stays strict JSON.
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        ..Default::default()
    };
    CstRootNode::parse(text, &options).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The root object, created when the document is empty; an error when the
/// document holds something else (Cairn will not replace it).
pub fn root_object(root: &CstRootNode) -> anyhow::Result<CstObject> {
    match root.value() {
        None => Ok(root.object_value_or_set()),
        Some(v) => v.as_object().context("the document is not a JSON object"),
    }
}

/// `obj[name]` as an object, created (appended) when missing; an error when
/// it holds something else.
pub fn child_object(obj: &CstObject, name: &str) -> anyhow::Result<CstObject> {
    match obj.get(name) {
        None => Ok(obj.object_value_or_set(name)),
        Some(prop) => match prop.value().and_then(|v| v.as_object()) {
            Some(o) => Ok(o),
            None => bail!("`{name}` is not a JSON object; not touching it"),
        },
    }
}

/// `obj[name]` as an array, created when missing; an error for another type.
pub fn child_array(obj: &CstObject, name: &str) -> anyhow::Result<jsonc_parser::cst::CstArray> {
    match obj.get(name) {
        None => Ok(obj.array_value_or_set(name)),
        Some(prop) => match prop.value().and_then(|v| v.as_array()) {
            Some(a) => Ok(a),
            None => bail!("`{name}` is not a JSON array; not touching it"),
        },
    }
}

/// The plain value of a node.
pub fn value_of(node: &CstNode) -> Value {
    node.to_serde_value().unwrap_or(Value::Null)
}

/// The whole document as a plain value, for comparing two documents whatever
/// their formatting (serde_json's map ignores key order in equality).
pub fn document_value(root: &CstRootNode) -> Value {
    root.to_serde_value().unwrap_or(Value::Object(Default::default()))
}
