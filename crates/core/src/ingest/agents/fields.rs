//! Reading fields of a hook's JSON with errors that name the field.

use serde_json::{Map, Value};

use crate::error::Error;

/// The body as a JSON object.
pub fn object(body: &[u8]) -> Result<Map<String, Value>, Error> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Error::bad_request("invalid_json", format!("the hook body is not valid JSON: {e}")))?;
    match value {
        Value::Object(input) => Ok(input),
        _ => Err(Error::unprocessable(
            "invalid_body",
            "the hook body must be a JSON object",
        )),
    }
}

pub fn required_str<'a>(input: &'a Map<String, Value>, field: &str) -> Result<&'a str, Error> {
    match input.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(Error::unprocessable(
            "invalid_field",
            format!("`{field}` is empty"),
        )),
        Some(_) => Err(Error::unprocessable(
            "invalid_field",
            format!("`{field}` must be a string"),
        )),
        None => Err(Error::unprocessable(
            "missing_field",
            format!("`{field}` is required"),
        )),
    }
}

pub fn optional_str<'a>(input: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, Error> {
    match input.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::unprocessable(
            "invalid_field",
            format!("`{field}` must be a string"),
        )),
    }
}

/// The first of several field names that is present, as a string.
pub fn first_str<'a>(input: &'a Map<String, Value>, fields: &[&str]) -> Result<Option<&'a str>, Error> {
    for field in fields {
        if let Some(s) = optional_str(input, field)? {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// Session ids are the agent's; bounded so they stay usable as keys.
pub fn session_id<'a>(input: &'a Map<String, Value>, field: &str) -> Result<&'a str, Error> {
    let id = required_str(input, field)?;
    if id.len() > 256 {
        return Err(Error::unprocessable(
            "invalid_field",
            format!("`{field}` is longer than 256 characters"),
        ));
    }
    Ok(id)
}
