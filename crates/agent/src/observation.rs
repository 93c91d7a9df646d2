//! Tool results a small model can read: a result that is wholly JSON (an object or an
//! array) is written as short `key: value` lines, errors and identifiers first, nested
//! keys joined with dots, items of a list as `- ` lines (one line each when they fit),
//! a list of objects followed by its lowest and highest items (`list_extremes`). Any
//! other text is kept as it is.

use serde_json::{Map, Value};

use crate::json_leaves::{dotted, rank, scalar};

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

fn ordered(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    // Stable: the tool's own order within a rank.
    entries.sort_by_key(|(key, _)| rank(key));
    entries
}

fn object_lines(map: &Map<String, Value>, prefix: &str, lines: &mut Vec<String>) {
    for (key, value) in ordered(map) {
        let path = dotted(prefix, key);
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

/// Items of a list, then, for a list of objects, which item is lowest and highest in
/// each number or date the items differ in: a small model reading a list of flights
/// or warehouses picks the first one instead of comparing.
fn list_lines(items: &[Value], prefix: &str, lines: &mut Vec<String>) {
    item_lines(items, prefix, lines);
    lines.extend(crate::list_extremes::extremes(items));
}

/// Items of a list: an object on one line when it fits (nested objects as dotted keys,
/// short lists in brackets), so items compare side by side; anything else on its own
/// lines.
fn item_lines(items: &[Value], prefix: &str, lines: &mut Vec<String>) {
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::Object(map) => match inline_object(map) {
                Some(line) => lines.push(format!("- {line}")),
                None => {
                    lines.push(format!("- item {}:", index + 1));
                    object_lines(map, &format!("{prefix}[{}]", index + 1), lines);
                }
            },
            other => lines.push(format!("- {}", scalar(other))),
        }
    }
}

/// The longest list item written on one line, in characters.
const MAX_INLINE: usize = 300;

/// `map` as one line of `key: value` fields, or `None` when it is too deep or too long.
fn inline_object(map: &Map<String, Value>) -> Option<String> {
    let mut fields = Vec::new();
    inline_fields(map, "", 0, &mut fields)?;
    let line = fields.join(", ");
    (line.chars().count() <= MAX_INLINE).then_some(line)
}

/// The fields of `map` under `prefix`: scalars as they are, nested objects as dotted
/// keys, lists of scalars or of flat objects in brackets; deeper structure is `None`.
fn inline_fields(
    map: &Map<String, Value>,
    prefix: &str,
    depth: usize,
    fields: &mut Vec<String>,
) -> Option<()> {
    if depth > 2 {
        return None;
    }
    for (key, value) in ordered(map) {
        let path = dotted(prefix, key);
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                inline_fields(inner, &path, depth + 1, fields)?
            }
            Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
                let mut shown = Vec::new();
                for item in items {
                    let Value::Object(inner) = item else {
                        return None;
                    };
                    let mut inner_fields = Vec::new();
                    for (k, v) in ordered(inner) {
                        if v.is_object() || v.is_array() {
                            return None;
                        }
                        inner_fields.push(format!("{k}: {}", scalar(v)));
                    }
                    shown.push(format!("({})", inner_fields.join(", ")));
                }
                fields.push(format!("{path}: [{}]", shown.join(", ")));
            }
            Value::Array(items) if !items.is_empty() => {
                let shown: Vec<String> = items.iter().map(scalar).collect();
                fields.push(format!("{path}: [{}]", shown.join(", ")));
            }
            other => fields.push(format!("{path}: {}", scalar(other))),
        }
    }
    Some(())
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
        let nested = r#"{"orders": [{"id": "O-1", "total": {"amount": 54.1, "currency": "EUR"}, "items": [{"sku": "A", "qty": 2}]}, {"id": "O-2", "tags": ["x", "y"]}]}"#;
        assert_eq!(
            json_as_lines(nested).unwrap(),
            "orders:\n- id: O-1, total.amount: 54.1, total.currency: EUR, items: [(sku: A, qty: 2)]\n- id: O-2, tags: [x, y]"
        );
        let deep = r#"{"orders": [{"id": "O-1", "items": [{"sku": "A", "parts": [{"p": 1}]}]}]}"#;
        assert_eq!(
            json_as_lines(deep).unwrap(),
            "orders:\n- item 1:\norders[1].id: O-1\norders[1].items:\n- sku: A, parts: [(p: 1)]"
        );
        let long = format!(r#"[{{"id": "A", "text": "{}"}}]"#, "w".repeat(400));
        assert!(json_as_lines(&long).unwrap().starts_with("- item 1:"));
    }

    #[test]
    fn lists_of_objects_say_which_item_is_lowest_and_highest() {
        let flights = r#"{"flights": [
            {"flight_id": "UA-1187", "stops": 0, "price": {"amount": 289, "currency": "USD"}},
            {"flight_id": "WN-2240", "stops": 1, "price": {"amount": 214, "currency": "USD"}},
            {"flight_id": "DL-0931", "stops": 0, "price": {"amount": 247, "currency": "USD"}}]}"#;
        let lines = json_as_lines(flights).unwrap();
        assert!(
            lines.ends_with("(by stops: lowest UA-1187, DL-0931 at 0, highest WN-2240 at 1)\n(by price.amount: lowest WN-2240 at 214, highest UA-1187 at 289)"),
            "{lines}"
        );
        let orders = r#"[{"id": "O-1", "placed_at": "2024-01-22", "open": true},
            {"id": "O-2", "placed_at": "2024-06-10T08:00:00Z", "open": false}]"#;
        let lines = json_as_lines(orders).unwrap();
        assert!(
            lines.ends_with(
                "(by placed_at: earliest O-1 at 2024-01-22, latest O-2 at 2024-06-10T08:00:00Z)"
            ),
            "{lines}"
        );
        // Equal values, identifiers and text are not compared; nor is one item.
        for text in [
            r#"[{"id": "A", "n": 1}, {"id": "B", "n": 1}]"#,
            r#"[{"id": 7, "name": "x"}, {"id": 9, "name": "y"}]"#,
            r#"[{"id": "A", "n": 1}]"#,
        ] {
            assert!(!json_as_lines(text).unwrap().contains("(by "), "{text}");
        }
        // Items without an identifier are named by their place.
        let lines = json_as_lines(r#"[{"w": 3}, {"w": 5}]"#).unwrap();
        assert!(
            lines.ends_with("(by w: lowest item 1 at 3, highest item 2 at 5)"),
            "{lines}"
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
