//! Reading a model's reply, per profile: strict calls in the model's family's syntax
//! (full, structured),
//! loose search for anything call-shaped (naive), or ReAct text (react).

use rein_format::hermes::ParseError;
use rein_format::Family;
use serde_json::{Map, Value};

/// A call as the model proposed it, before name repair and validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedCall {
    /// The tool name as written.
    pub name: String,
    /// The arguments as written.
    pub arguments: Value,
}

/// What a reply amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// A final answer (no call).
    Answer(String),
    /// Calls, with any text around them.
    Calls {
        /// Text outside the calls.
        content: Option<String>,
        /// The calls, in order.
        calls: Vec<ProposedCall>,
    },
    /// Not readable as calls.
    Unreadable(String),
    /// The token limit cut a call.
    Truncated,
}

/// Strict reading in `family`'s syntax. `calls_only` when the turn had to be calls.
pub fn read_strict(family: Family, text: &str, cut_off: bool, calls_only: bool) -> Reading {
    match family.parse_reply_checked(text, cut_off, calls_only) {
        Ok(parsed) if parsed.calls.is_empty() => {
            if calls_only {
                Reading::Unreadable("a tool call was required and the reply had none".into())
            } else {
                Reading::Answer(parsed.content.unwrap_or_default())
            }
        }
        Ok(parsed) => Reading::Calls {
            content: parsed.content,
            calls: parsed
                .calls
                .into_iter()
                .map(|c| ProposedCall {
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
        },
        Err(ParseError::Truncated) => Reading::Truncated,
        Err(e) => Reading::Unreadable(e.to_string()),
    }
}

/// A reply that is nothing but calls written as bare JSON objects
/// (`{"name": .., "arguments": {..}}`, one or more, optionally in one ```json fence),
/// parsed strictly: every object has exactly those two keys, a string name and object
/// arguments, and nothing else is in the reply. `None` for anything less clear.
pub fn read_bare_calls(text: &str) -> Option<Vec<ProposedCall>> {
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
        calls.push(ProposedCall { name, arguments });
    }
    (!calls.is_empty()).then_some(calls)
}

/// Naive reading, the way a harness without a grammar reads output: calls in
/// `family`'s syntax if they parse, else any JSON object in the text that looks like a call (`name` or
/// `function`, with `arguments` or `parameters`, fenced or not); otherwise the text
/// is the answer.
pub fn read_loose(family: Family, text: &str) -> Reading {
    if let Ok(parsed) = family.parse_reply(text) {
        if !parsed.calls.is_empty() {
            return read_strict(family, text, false, false);
        }
    }
    let calls: Vec<ProposedCall> = json_objects(text)
        .into_iter()
        .filter_map(call_shaped)
        .collect();
    if calls.is_empty() {
        Reading::Answer(text.trim().to_string())
    } else {
        Reading::Calls {
            content: None,
            calls,
        }
    }
}

fn call_shaped(value: Value) -> Option<ProposedCall> {
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
    Some(ProposedCall { name, arguments })
}

/// Every top-level JSON object that parses, scanning from each `{`.
fn json_objects(text: &str) -> Vec<Value> {
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

/// ReAct reading: `Final Answer:` ends the run; otherwise `Action:` and
/// `Action Input:` (a JSON object, or a bare string for single-parameter use).
pub fn read_react(text: &str) -> Reading {
    let final_answer = find_field(text, "Final Answer:");
    let action = find_field(text, "Action:");
    if let (Some(answer), None) = (&final_answer, &action) {
        return Reading::Answer(answer.trim().to_string());
    }
    let Some(action) = action else {
        return Reading::Unreadable(
            "Invalid format: missing 'Action:' after 'Thought:' (or 'Final Answer:' when done)"
                .into(),
        );
    };
    let name = action.lines().next().unwrap_or_default().trim().to_string();
    let input = find_field(text, "Action Input:").unwrap_or_default();
    let input = input.trim();
    let arguments = if input.is_empty() {
        Value::Object(Map::new())
    } else {
        match json_objects(input).into_iter().next() {
            Some(value) => value,
            None => {
                return Reading::Unreadable(format!(
                    "Invalid format: 'Action Input:' must be a JSON object, got `{}`",
                    input.lines().next().unwrap_or_default()
                ))
            }
        }
    };
    let thought = text
        .find("Action:")
        .map(|i| text[..i].trim().to_string())
        .filter(|t| !t.is_empty());
    Reading::Calls {
        content: thought,
        calls: vec![ProposedCall { name, arguments }],
    }
}

/// The text after the last `label` up to the next ReAct label.
fn find_field(text: &str, label: &str) -> Option<String> {
    let at = text.rfind(label)? + label.len();
    let rest = &text[at..];
    let end = [
        "\nThought:",
        "\nAction:",
        "\nAction Input:",
        "\nObservation:",
        "\nFinal Answer:",
    ]
    .iter()
    .filter_map(|l| rest.find(l))
    .min()
    .unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_reading_separates_answers_calls_and_cuts() {
        assert_eq!(
            read_strict(Family::Hermes, "All done.", false, false),
            Reading::Answer("All done.".into())
        );
        let call = "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {}}\n</tool_call>";
        assert!(
            matches!(read_strict(Family::Hermes, call, false, false), Reading::Calls { calls, .. } if calls.len() == 1)
        );
        assert_eq!(
            read_strict(
                Family::Hermes,
                "<tool_call>\n{\"name\": \"list",
                true,
                false
            ),
            Reading::Truncated
        );
        assert!(matches!(
            read_strict(Family::Hermes, "no call", false, true),
            Reading::Unreadable(_)
        ));
        assert!(matches!(
            read_strict(
                Family::Hermes,
                "<tool_call>\n{\"name\": 3}\n</tool_call>",
                false,
                false
            ),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn loose_reading_finds_call_shaped_json_anywhere() {
        let fenced = "I'll list it.\n```json\n{\"function\": \"list_dir\", \"parameters\": {\"path\": \".\"}}\n```";
        assert_eq!(
            read_loose(Family::Hermes, fenced),
            Reading::Calls {
                content: None,
                calls: vec![ProposedCall {
                    name: "list_dir".into(),
                    arguments: json!({"path": "."})
                }]
            }
        );
        let nested = "{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}";
        assert_eq!(
            read_loose(Family::Hermes, nested),
            Reading::Calls {
                content: None,
                calls: vec![ProposedCall {
                    name: "shell".into(),
                    arguments: json!({"command": "ls"})
                }]
            }
        );
        assert_eq!(
            read_loose(Family::Hermes, "The answer is {not json}."),
            Reading::Answer("The answer is {not json}.".into())
        );
    }

    #[test]
    fn react_reading_takes_actions_and_final_answers() {
        let step = "Thought: look around\nAction: list_dir\nAction Input: {\"path\": \".\"}";
        assert_eq!(
            read_react(step),
            Reading::Calls {
                content: Some("Thought: look around".into()),
                calls: vec![ProposedCall {
                    name: "list_dir".into(),
                    arguments: json!({"path": "."})
                }]
            }
        );
        assert_eq!(
            read_react("Thought: done\nFinal Answer: 42"),
            Reading::Answer("42".into())
        );
        assert!(
            matches!(read_react("I think so."), Reading::Unreadable(m) if m.contains("Action:"))
        );
        assert!(
            matches!(read_react("Action: shell\nAction Input: ls -la"), Reading::Unreadable(m) if m.contains("JSON object"))
        );
    }
}

#[cfg(test)]
mod bare_call_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_replies_that_are_wholly_calls_are_read_as_bare_calls() {
        let one = read_bare_calls("{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n")
            .unwrap();
        assert_eq!(one[0].name, "list_dir");
        assert_eq!(one[0].arguments, json!({"path": "."}));
        let two = read_bare_calls("```json\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {}}\n```");
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
            assert_eq!(read_bare_calls(text), None, "{text}");
        }
    }
}
