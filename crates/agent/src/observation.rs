//! Tool results a small model can read: a result that is wholly JSON (an object or an
//! array) is written as short `key: value` lines, errors and identifiers first, nested
//! keys joined with dots, items of a list as `- ` lines. Any other text is kept as it
//! is.

use serde_json::{Map, Value};

/// The most lines a rewritten result keeps; the rest is counted.
const MAX_LINES: usize = 60;

/// `text` as `key: value` lines when it is JSON, else `None`.
pub(crate) fn json_as_lines(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !trimmed.starts_with(['{', '[']) {
        return None;
    }
    let value: Value = serde_json::from_str(trimmed).ok()?;
    let mut lines = Vec::new();
    match &value {
        Value::Object(map) if !map.is_empty() => object_lines(map, "", &mut lines),
        Value::Array(items) if !items.is_empty() => list_lines(items, "", &mut lines),
        Value::Array(_) => lines.push("(an empty list)".to_string()),
        _ => lines.push("(an empty object)".to_string()),
    }
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(format!("[… {more} more lines]"));
    }
    Some(lines.join("\n"))
}

/// How early a key comes: errors, then identifiers, then status and names.
fn rank(key: &str) -> u8 {
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

fn ordered(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    // Stable: the tool's own order within a rank.
    entries.sort_by_key(|(key, _)| rank(key));
    entries
}

fn object_lines(map: &Map<String, Value>, prefix: &str, lines: &mut Vec<String>) {
    for (key, value) in ordered(map) {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if !inner.is_empty() => object_lines(inner, &path, lines),
            Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
                lines.push(format!("{path}:"));
                list_lines(items, &path, lines);
            }
            other => lines.push(format!("{path}: {}", scalar(other))),
        }
    }
}

/// Items of a list: a flat object on one line, anything else on its own lines.
fn list_lines(items: &[Value], prefix: &str, lines: &mut Vec<String>) {
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::Object(map) if map.values().all(|v| !v.is_object() && !v.is_array()) => {
                let fields: Vec<String> = ordered(map)
                    .into_iter()
                    .map(|(k, v)| format!("{k}: {}", scalar(v)))
                    .collect();
                lines.push(format!("- {}", fields.join(", ")));
            }
            Value::Object(map) => {
                lines.push(format!("- item {}:", index + 1));
                object_lines(map, &format!("{prefix}[{}]", index + 1), lines);
            }
            other => lines.push(format!("- {}", scalar(other))),
        }
    }
}

/// A leaf as text: strings without quotes, lists of leaves joined by commas.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        Value::Array(items) if items.is_empty() => "(none)".to_string(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(", "),
        Value::Object(map) if map.is_empty() => "(none)".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_json_becomes_lines_with_errors_and_ids_first() {
        let text = r#"{"user": {"name": "Jonas Berg", "email": "j@example.com", "id": "U-7731", "tags": ["a", "b"]}, "error": null}"#;
        assert_eq!(
            json_as_lines(text).unwrap(),
            "error: none\nuser.id: U-7731\nuser.name: Jonas Berg\nuser.email: j@example.com\nuser.tags: a, b"
        );
        let list = r#"[{"name": "Mara Lindqvist", "user_id": "U-11872"}, {"user_id": "U-20931", "name": "Mara Lind"}]"#;
        assert_eq!(
            json_as_lines(list).unwrap(),
            "- user_id: U-11872, name: Mara Lindqvist\n- user_id: U-20931, name: Mara Lind"
        );
        let deep = r#"{"orders": [{"id": "O-1", "items": [{"sku": "A"}]}]}"#;
        assert_eq!(
            json_as_lines(deep).unwrap(),
            "orders:\n- item 1:\norders[1].id: O-1\norders[1].items:\n- sku: A"
        );
    }

    #[test]
    fn text_that_is_not_wholly_json_is_kept() {
        for text in [
            "Created ticket SUP-3318",
            "{\"a\": 1} and more",
            "42",
            "\"quoted\"",
        ] {
            assert_eq!(json_as_lines(text), None, "{text}");
        }
        assert_eq!(json_as_lines("[]").unwrap(), "(an empty list)");
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}}}", many.join(","));
        let lines = json_as_lines(&text).unwrap();
        assert!(lines.ends_with("[… 40 more lines]"), "{lines}");
    }
}
