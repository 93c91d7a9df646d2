//! Reading one call written as a JSON object (`{"name": ..., "parameters": {...}}`
//! and its variants) and skipping over JSON values in text.

use serde_json::{Map, Value};

use crate::hermes::RawCall;

/// Why JSON could not be read at a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// The text ended inside the value.
    Eof,
    /// The text is not JSON there.
    Syntax(String),
}

/// The JSON value at the start of `text` (leading whitespace allowed) and the byte
/// offset just after it.
pub(crate) fn value_at(text: &str) -> Result<(Value, usize), JsonError> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Ok((value, values.byte_offset())),
        Some(Err(e)) if e.is_eof() => Err(JsonError::Eof),
        Some(Err(e)) => Err(JsonError::Syntax(e.to_string())),
        None => Err(JsonError::Eof),
    }
}

/// A call from an object with a string `name` and an object under one of
/// `argument_keys` (absent means `{}`); `"type": "function"` is allowed, any other key
/// is refused.
pub(crate) fn read_call(value: Value, argument_keys: &[&str]) -> Result<RawCall, String> {
    let Value::Object(mut map) = value else {
        return Err("not an object".into());
    };
    let name = match map.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err("no string `name`".into()),
    };
    let mut arguments = None;
    for key in argument_keys {
        if let Some(value) = map.remove(*key) {
            if arguments.is_some() {
                return Err("arguments given twice".into());
            }
            arguments = Some(value);
        }
    }
    let arguments = match arguments {
        Some(args @ Value::Object(_)) => args,
        None => Value::Object(Map::new()),
        Some(other) => return Err(format!("the arguments are {other}, not an object")),
    };
    match map.remove("type") {
        None => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => return Err(format!("unexpected `type` {other}")),
    }
    if let Some(key) = map.keys().next() {
        return Err(format!("unexpected key `{key}`"));
    }
    Ok(RawCall { name, arguments })
}

/// A JSON string literal for `text`.
pub(crate) fn quoted(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}
