//! How a JSON result's keys and leaf values read as text: which keys come first,
//! nested keys joined with dots, leaves without quotes.

use serde_json::Value;

/// How early a key comes: errors, then identifiers, then status and names.
pub(crate) fn rank(key: &str) -> u8 {
    let key = key.to_ascii_lowercase();
    if key.contains("error") || key == "message" {
        0
    } else if key == "id" || key.ends_with("_id") || (key.ends_with("id") && key.len() <= 8) {
        1
    } else if ["status", "state", "result", "name", "title"].contains(&key.as_str()) {
        2
    } else {
        3
    }
}

/// `key` under `prefix`, joined with a dot.
pub(crate) fn dotted(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// A leaf as text: strings without quotes, lists of leaves joined by commas.
pub(crate) fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        Value::Array(items) if items.is_empty() => "(none)".to_string(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(", "),
        Value::Object(map) if map.is_empty() => "(none)".to_string(),
        other => other.to_string(),
    }
}
