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
