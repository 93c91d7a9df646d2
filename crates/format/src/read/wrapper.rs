//! Calls written outside the family's call markers: a reply that is wholly bare JSON
//! calls (`{"name": .., "arguments": {..}}`, optionally in one ```json fence), and the
//! loose scan for anything call-shaped that a harness without a grammar would run.

use serde_json::{Map, Value};

use crate::family::hermes::RawCall;

/// A reply that is nothing but calls written as bare JSON objects
/// (`{"name": .., "arguments": {..}}`, one or more, optionally in one ```json fence),
/// parsed strictly: every object has exactly those two keys, a string name and object
/// arguments, and nothing else is in the reply. `None` for anything less clear.
pub fn bare_calls(text: &str) -> Option<Vec<RawCall>> {
    let mut body = text.trim();
    if let Some(inner) = body.strip_prefix("```") {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        body = inner.strip_suffix("```")?.trim();
    }
    if !body.starts_with('{') {
        return None;
    }
    let mut calls = Vec::new();
    for value in serde_json::Deserializer::from_str(body).into_iter::<Value>() {
        let Value::Object(mut map) = value.ok()? else {
            return None;
        };
        if map.len() != 2 {
            return None;
        }
        let Some(Value::String(name)) = map.remove("name") else {
            return None;
        };
        let arguments = map.remove("arguments").filter(Value::is_object)?;
        calls.push(RawCall { name, arguments });
    }
    (!calls.is_empty()).then_some(calls)
}

/// Every JSON object in `text` that looks like a call (`name` or `function`, with
/// `arguments` or `parameters`, fenced or not), in order: how a harness without a
/// grammar reads output.
pub fn loose_calls(text: &str) -> Vec<RawCall> {
    json_objects(text)
        .into_iter()
        .filter_map(call_shaped)
        .collect()
}

fn call_shaped(value: Value) -> Option<RawCall> {
    let Value::Object(mut map) = value else {
        return None;
    };
    let name = match map.remove("name").or_else(|| map.remove("function")) {
        Some(Value::String(name)) => name,
        Some(Value::Object(mut inner)) => {
            // {"function": {"name": .., "arguments": ..}}
            let name = inner.remove("name")?.as_str()?.to_string();
            map.extend(inner);
            name
        }
        _ => return None,
    };
    let arguments = match map.remove("arguments").or_else(|| map.remove("parameters")) {
        Some(Value::Object(args)) => Value::Object(args),
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        None => Value::Object(Map::new()),
        Some(other) => other,
    };
    Some(RawCall { name, arguments })
}

/// Every top-level JSON object that parses, scanning from each `{`.
pub fn json_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let mut offset = 0;
    while let Some(start) = text[offset..].find('{') {
        let at = offset + start;
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                found.push(value);
                offset = at + stream.byte_offset().max(1);
            }
            _ => offset = at + 1,
        }
    }
    found
}

/// Whether content that starts with `text` (already trimmed) may be a call written in
/// some wrapper, so a stream must hold it until the reply ends.
pub fn may_open_wrapper(text: &str) -> bool {
    text.starts_with(['{', '[', '`', '<'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_replies_that_are_wholly_calls_are_read_as_bare_calls() {
        let one =
            bare_calls("{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n").unwrap();
        assert_eq!(one[0].name, "list_dir");
        assert_eq!(one[0].arguments, json!({"path": "."}));
        let two = bare_calls("```json\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {}}\n```");
        assert_eq!(two.map(|c| c.len()), Some(2));
        for text in [
            "Sure: {\"name\": \"a\", \"arguments\": {}}",
            "{\"name\": \"a\", \"arguments\": {}} and then",
            "{\"name\": \"a\", \"arguments\": \"{}\"}",
            "{\"name\": \"a\", \"arguments\": {}, \"id\": 1}",
            "{\"function\": \"a\", \"arguments\": {}}",
            "{\"name\": \"a\", \"arguments\": {\"path\": ",
            "The answer is 42.",
        ] {
            assert_eq!(bare_calls(text), None, "{text}");
        }
    }

    #[test]
    fn loose_reading_finds_call_shaped_json_anywhere() {
        let fenced = "I'll list it.\n```json\n{\"function\": \"list_dir\", \"parameters\": {\"path\": \".\"}}\n```";
        assert_eq!(
            loose_calls(fenced),
            vec![RawCall {
                name: "list_dir".into(),
                arguments: json!({"path": "."})
            }]
        );
        let nested = "{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}";
        assert_eq!(
            loose_calls(nested),
            vec![RawCall {
                name: "shell".into(),
                arguments: json!({"command": "ls"})
            }]
        );
        assert!(loose_calls("The answer is {not json}.").is_empty());
    }
}
