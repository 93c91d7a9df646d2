//! `react`: Thought / Action / Action Input / Observation text, parsed by pattern.
//! The tools are listed in the prompt in ReAct's own words, nothing constrains
//! decoding, generation stops at `Observation:`, a reply that does not follow the
//! pattern gets the error as its observation, and results come back as
//! `Observation:` user turns.

use rein_engine::{Completion, ReadMode};
use rein_format::read::json_objects;
use rein_format::ToolFormat;
use rein_protocol::{Message, ToolChoice};
use serde_json::{Map, Value};

use super::{Exchange, ReadContext, RetryMode, Shape, Step, Strategy};
use crate::recovery::FailureClass;
use crate::validate::ProposedCall;

/// The `react` profile.
pub(crate) struct React;

impl Strategy for React {
    fn describes_tools(&self) -> bool {
        true
    }

    fn shape(&self, _tool_format: ToolFormat, _forced: Option<&ToolChoice>) -> Shape {
        Shape {
            tools: false,
            tool_format: ToolFormat::Emulated,
            choice: ToolChoice::Auto,
            constrained: false,
            read: ReadMode::TEXT,
            stop: vec!["\nObservation:".into(), "Observation:".into()],
        }
    }

    fn read(&self, completion: &Completion, _context: ReadContext<'_>) -> Step {
        let text = &completion.text;
        match read_react(text) {
            Ok(step) => step,
            Err(reason) => Step::Retry {
                class: FailureClass::Format,
                detail: reason.clone(),
                note: None,
                mode: RetryMode::Same,
                // ReAct's own convention: the error is the next observation.
                keep: vec![
                    Message::assistant(text.trim()),
                    Message::user(format!("Observation: {reason}")),
                ],
            },
        }
    }

    fn record(&self, exchange: Exchange<'_>, history: &mut Vec<Message>) {
        history.push(Message::assistant(exchange.raw.trim()));
        let observation = exchange
            .results
            .iter()
            .map(|text| format!("Observation: {text}"))
            .collect::<Vec<_>>()
            .join("\n");
        history.push(Message::user(observation));
    }
}

/// ReAct reading: `Final Answer:` ends the run; otherwise `Action:` and
/// `Action Input:` (a JSON object, or nothing for a tool without arguments).
pub(crate) fn read_react(text: &str) -> Result<Step, String> {
    let final_answer = find_field(text, "Final Answer:");
    let action = find_field(text, "Action:");
    if let (Some(answer), None) = (&final_answer, &action) {
        return Ok(Step::Answer(answer.trim().to_string()));
    }
    let Some(action) = action else {
        return Err(
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
                return Err(format!(
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
    Ok(Step::Calls {
        content: thought,
        calls: vec![ProposedCall::loose(rein_format::hermes::RawCall {
            name,
            arguments,
        })],
        format_repair: None,
    })
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
    fn react_reading_takes_actions_and_final_answers() {
        let step = "Thought: look around\nAction: list_dir\nAction Input: {\"path\": \".\"}";
        assert_eq!(
            read_react(step),
            Ok(Step::Calls {
                content: Some("Thought: look around".into()),
                calls: vec![ProposedCall::loose(rein_format::hermes::RawCall {
                    name: "list_dir".into(),
                    arguments: json!({"path": "."})
                })],
                format_repair: None,
            })
        );
        assert_eq!(
            read_react("Thought: done\nFinal Answer: 42"),
            Ok(Step::Answer("42".into()))
        );
        assert!(matches!(read_react("I think so."), Err(m) if m.contains("Action:")));
        assert!(
            matches!(read_react("Action: shell\nAction Input: ls -la"), Err(m) if m.contains("JSON object"))
        );
    }
}
