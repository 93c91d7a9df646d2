//! The reader's events as OpenAI deltas: content, reasoning, and whole checked calls.
//! Streaming sends the deltas as they come; a plain response is the same deltas
//! gathered, so both give the same message.

use rein_format::{CallCheck, ReplyEvent};
use rein_protocol::openai::{ChunkDelta, ResponseMessage, WireToolCall};
use serde_json::Value;

/// One piece of the assistant's message.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// More content.
    Content(String),
    /// More reasoning (`reasoning_content`).
    Reasoning(String),
    /// A whole call: its arguments always parse as a JSON object.
    Call {
        /// Its position among this reply's calls.
        index: usize,
        /// Its id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as JSON text.
        arguments: String,
    },
}

impl Delta {
    /// The `delta` of a stream chunk.
    pub fn chunk(&self) -> ChunkDelta {
        match self {
            Delta::Content(text) => ChunkDelta {
                content: Some(text.clone()),
                ..ChunkDelta::default()
            },
            Delta::Reasoning(text) => ChunkDelta {
                reasoning_content: Some(text.clone()),
                ..ChunkDelta::default()
            },
            Delta::Call {
                index,
                id,
                name,
                arguments,
            } => ChunkDelta {
                tool_calls: Some(vec![WireToolCall {
                    index: Some(*index),
                    ..wire_call(id, name, arguments)
                }]),
                ..ChunkDelta::default()
            },
        }
    }
}

fn wire_call(id: &str, name: &str, arguments: &str) -> WireToolCall {
    WireToolCall::new(
        Some(id.to_string()),
        name,
        &Value::String(arguments.to_string()),
    )
}

/// Turns reply events into deltas: calls numbered in order, with ids.
#[derive(Debug)]
pub struct DeltaWriter {
    call_prefix: String,
    calls: usize,
}

impl DeltaWriter {
    /// Calls get ids starting with `call_prefix`.
    pub fn new(call_prefix: String) -> Self {
        Self {
            call_prefix,
            calls: 0,
        }
    }

    /// The delta of one event (`None` for empty text).
    pub fn delta(&mut self, event: ReplyEvent) -> Option<Delta> {
        match event {
            ReplyEvent::Content(text) if text.is_empty() => None,
            ReplyEvent::Content(text) => Some(Delta::Content(text)),
            ReplyEvent::Reasoning(text) => Some(Delta::Reasoning(text)),
            ReplyEvent::Call(call) => {
                if let CallCheck::Invalid(error) = &call.check {
                    tracing::warn!(tool = %call.name, "a call does not validate: {error}");
                }
                let index = self.calls;
                self.calls += 1;
                Some(Delta::Call {
                    index,
                    id: format!("{}_{index}", self.call_prefix),
                    name: call.name,
                    arguments: call.arguments.to_string(),
                })
            }
        }
    }
}

/// The assistant message that a list of deltas adds up to.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Gathered {
    /// All content.
    pub content: String,
    /// All reasoning.
    pub reasoning: String,
    /// The calls, as OpenAI `tool_calls` entries.
    pub calls: Vec<WireToolCall>,
}

impl Gathered {
    /// Adds deltas.
    pub fn add(&mut self, deltas: &[Delta]) {
        for delta in deltas {
            match delta {
                Delta::Content(text) => self.content.push_str(text),
                Delta::Reasoning(text) => self.reasoning.push_str(text),
                Delta::Call {
                    id,
                    name,
                    arguments,
                    ..
                } => self.calls.push(wire_call(id, name, arguments)),
            }
        }
    }

    /// The `message` of a response.
    pub fn message(&self) -> ResponseMessage {
        ResponseMessage {
            role: "assistant".into(),
            content: (!self.content.is_empty() || self.calls.is_empty())
                .then(|| self.content.clone()),
            reasoning_content: (!self.reasoning.is_empty()).then(|| self.reasoning.clone()),
            tool_calls: self.calls.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_format::{ModelFormat, ReadMode, ToolChoice, ToolSet};
    use rein_protocol::ToolSpec;
    use serde_json::json;

    fn tools() -> ToolSet {
        let specs: Vec<ToolSpec> =
            serde_json::from_value(json!([{"type": "function", "function": {
            "name": "add", "parameters": {"type": "object",
                "properties": {"a": {"type": "integer"}, "my key": {"type": "string"}},
                "required": ["a"]}}}]))
            .unwrap();
        ToolSet::prepare(&specs).unwrap()
    }

    fn qwen() -> ModelFormat {
        ModelFormat::detect(Some("{{ tools }}"), "qwen2").unwrap()
    }

    fn read_all_with(text: &str, split: usize, tools: Option<&ToolSet>) -> (Vec<Delta>, Gathered) {
        let format = qwen();
        let mode = if tools.is_some() {
            ReadMode::CLIENT
        } else {
            ReadMode::TEXT
        };
        let mut reader = format.reader(tools, &ToolChoice::Auto, mode);
        let mut writer = DeltaWriter::new("call_x".into());
        let mut deltas = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(split.max(1)) {
            for event in reader.push(&chunk.iter().collect::<String>()) {
                deltas.extend(writer.delta(event));
            }
        }
        for event in reader.finish(false).events {
            deltas.extend(writer.delta(event));
        }
        let mut gathered = Gathered::default();
        gathered.add(&deltas);
        (deltas, gathered)
    }

    fn read_all(text: &str, split: usize) -> (Vec<Delta>, Gathered) {
        let tools = tools();
        read_all_with(text, split, Some(&tools))
    }

    #[test]
    fn calls_come_whole_with_original_names_and_coerced_values() {
        let text = "Sure.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": \"42\", \"my_key\": \"v\"}}\n</tool_call>";
        let (deltas, gathered) = read_all(text, 3);
        assert_eq!(gathered.content, "Sure.");
        assert_eq!(gathered.calls.len(), 1);
        let call = deltas
            .iter()
            .find(|d| matches!(d, Delta::Call { .. }))
            .unwrap();
        let Delta::Call {
            arguments,
            name,
            id,
            ..
        } = call
        else {
            unreachable!()
        };
        assert_eq!(name, "add");
        assert_eq!(id, "call_x_0");
        assert_eq!(
            serde_json::from_str::<Value>(arguments).unwrap(),
            json!({"a": 42, "my key": "v"})
        );
    }

    #[test]
    fn every_split_gives_the_same_message() {
        let text = "<think>plan</think>I will add.<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}</tool_call>\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2}}</tool_call>";
        let whole = read_all(text, usize::MAX).1;
        assert_eq!(whole.calls.len(), 2);
        assert_eq!(whole.reasoning, "plan");
        for split in 1..12 {
            assert_eq!(read_all(text, split).1, whole, "split {split}");
        }
        assert_eq!(whole.message().content.as_deref(), Some("I will add."));
    }

    #[test]
    fn a_fenced_call_becomes_tool_calls_for_every_split() {
        let text = "```json\n{\"name\": \"add\", \"arguments\": {\"a\": 7}}\n```";
        let whole = read_all(text, usize::MAX).1;
        assert_eq!(whole.calls.len(), 1, "{whole:?}");
        assert_eq!(whole.content, "");
        assert_eq!(whole.calls[0].function.arguments, Some(json!("{\"a\":7}")));
        for split in 1..12 {
            assert_eq!(read_all(text, split).1, whole, "split {split}");
        }
        // A wrapped call that does not validate stays text.
        let bad = "{\"name\": \"add\", \"arguments\": {\"b\": 1}}";
        let read = read_all(bad, 4).1;
        assert!(read.calls.is_empty());
        assert_eq!(read.content, bad);
    }

    #[test]
    fn without_tools_the_text_is_content_as_is() {
        let (deltas, _) = read_all_with("<tool_call> is just text here", usize::MAX, None);
        assert_eq!(
            deltas,
            vec![Delta::Content("<tool_call> is just text here".into())]
        );
    }
}
