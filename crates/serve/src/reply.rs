//! Generated text read into OpenAI deltas: content, reasoning, and whole checked calls.
//! Streaming sends the deltas as they come; a plain response is the same deltas
//! gathered, so both give the same message.

use rein_format::stream::StreamEvent;
use rein_format::{Family, FamilyStream, ToolSet};
use serde_json::{json, Map, Value};

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
    /// The `delta` object of a stream chunk.
    pub fn to_json(&self) -> Value {
        match self {
            Delta::Content(text) => json!({"content": text}),
            Delta::Reasoning(text) => json!({"reasoning_content": text}),
            Delta::Call {
                index,
                id,
                name,
                arguments,
            } => json!({"tool_calls": [{
                "index": index,
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }]}),
        }
    }
}

/// Reads one reply as it is generated.
pub struct ReplyReader<'a> {
    /// `None`: the reply is plain text (no tools offered).
    parser: Option<FamilyStream>,
    tools: Option<&'a ToolSet>,
    call_prefix: String,
    /// The call being read: name and argument text so far.
    open_call: Option<(String, String)>,
    calls: usize,
}

impl<'a> ReplyReader<'a> {
    /// A reader for a reply in `family`'s format that may call `tools`; calls get ids
    /// starting with `call_prefix`.
    pub fn new(family: Family, tools: Option<&'a ToolSet>, call_prefix: String) -> Self {
        Self {
            parser: tools.map(|_| family.stream(false)),
            tools,
            call_prefix,
            open_call: None,
            calls: 0,
        }
    }

    /// Feeds generated text; returns the deltas it makes certain.
    pub fn push(&mut self, text: &str) -> Vec<Delta> {
        match self.parser.as_mut() {
            None if text.is_empty() => Vec::new(),
            None => vec![Delta::Content(text.to_string())],
            Some(parser) => {
                let events = parser.push(text);
                self.read(events)
            }
        }
    }

    /// Ends the reply (`cut_off`: the token limit ended it); returns the last deltas.
    pub fn finish(mut self, cut_off: bool) -> Vec<Delta> {
        match self.parser.take() {
            None => Vec::new(),
            Some(parser) => {
                let finished = parser.finish(cut_off);
                for rejected in &finished.reply.rejected {
                    tracing::debug!(text = %rejected.text, "a call was not returned: {:?}", rejected.rejection);
                }
                self.read(finished.events)
            }
        }
    }

    /// How many calls were returned.
    pub fn calls(&self) -> usize {
        self.calls
    }

    fn read(&mut self, events: Vec<StreamEvent>) -> Vec<Delta> {
        let mut deltas = Vec::new();
        for event in events {
            match event {
                StreamEvent::Content(text) => deltas.push(Delta::Content(text)),
                StreamEvent::Reasoning(text) => deltas.push(Delta::Reasoning(text)),
                StreamEvent::ToolCallStart { name, .. } => {
                    self.open_call = Some((name, String::new()));
                }
                StreamEvent::ToolCallArguments { delta, .. } => {
                    if let Some((_, arguments)) = self.open_call.as_mut() {
                        arguments.push_str(&delta);
                    }
                }
                StreamEvent::ToolCallEnd { .. } => {
                    if let Some((name, arguments)) = self.open_call.take() {
                        deltas.push(self.checked_call(name, &arguments));
                    }
                }
            }
        }
        deltas
    }

    /// A complete call, its arguments coerced, checked and given the tool's own
    /// property names.
    fn checked_call(&mut self, name: String, arguments: &str) -> Delta {
        let parsed: Value =
            serde_json::from_str(arguments).unwrap_or_else(|_| Value::Object(Map::new()));
        let checked = match self.tools.and_then(|t| t.get(&name)) {
            Some(tool) => match tool.validator.check_value(parsed.clone()) {
                Ok(value) => value,
                Err(error) => {
                    tracing::warn!(tool = %name, "a call does not validate: {error}");
                    tool.sanitized.schema.restore_names(&parsed)
                }
            },
            None => parsed,
        };
        let index = self.calls;
        self.calls += 1;
        Delta::Call {
            index,
            id: format!("{}_{index}", self.call_prefix),
            name,
            arguments: checked.to_string(),
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
    pub calls: Vec<Value>,
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
                } => self.calls.push(json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                })),
            }
        }
    }

    /// The `message` object of a response.
    pub fn message(&self) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": if self.content.is_empty() && !self.calls.is_empty() {
                Value::Null
            } else {
                Value::String(self.content.clone())
            },
        });
        if !self.reasoning.is_empty() {
            message["reasoning_content"] = json!(self.reasoning);
        }
        if !self.calls.is_empty() {
            message["tool_calls"] = json!(self.calls);
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::ToolSpec;

    fn tools() -> ToolSet {
        let specs: Vec<ToolSpec> =
            serde_json::from_value(json!([{"type": "function", "function": {
            "name": "add", "parameters": {"type": "object",
                "properties": {"a": {"type": "integer"}, "my key": {"type": "string"}},
                "required": ["a"]}}}]))
            .unwrap();
        ToolSet::prepare(&specs).unwrap()
    }

    fn read_all(text: &str, split: usize) -> (Vec<Delta>, Gathered) {
        let tools = tools();
        let mut reader = ReplyReader::new(Family::Hermes, Some(&tools), "call_x".into());
        let mut deltas = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(split.max(1)) {
            deltas.extend(reader.push(&chunk.iter().collect::<String>()));
        }
        deltas.extend(reader.finish(false));
        let mut gathered = Gathered::default();
        gathered.add(&deltas);
        (deltas, gathered)
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
        assert_eq!(whole.message()["content"], "I will add.");
    }

    #[test]
    fn without_tools_the_text_is_content_as_is() {
        let mut reader = ReplyReader::new(Family::Hermes, None, "c".into());
        let deltas = reader.push("<tool_call> is just text here");
        assert_eq!(
            deltas,
            vec![Delta::Content("<tool_call> is just text here".into())]
        );
        assert!(reader.finish(false).is_empty());
    }
}
