//! The OpenAI chat-completions wire format, as serde types: the server reads requests
//! and writes responses and chunks with them, and the remote backend writes requests
//! and reads responses with the same types. Unknown fields are ignored, as OpenAI's
//! own servers do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{FunctionCall, Message, Role, ToolCall, ToolChoice, ToolSpec};

/// `POST /v1/chat/completions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model asked for (a server with one model answers any name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation.
    pub messages: Vec<WireMessage>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolSpec>>,
    /// Which calls are allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<WireToolChoice>,
    /// Several calls per reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Most tokens in the reply (older name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Most tokens in the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Strings that end the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopStrings>,
    /// The reply's shape when it is not a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<WireResponseFormat>,
    /// Server-sent events instead of one body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Number of choices (only 1 is served).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// Token log-probabilities (not served).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// Frequency penalty (only 0 is served).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f32>,
    /// Presence penalty (only 0 is served).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f32>,
}

/// One message as clients send it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireMessage {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Text, text parts, or null.
    #[serde(default)]
    pub content: Option<WireContent>,
    /// An assistant's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<WireToolCall>>,
    /// The call a tool result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A tool result's tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A message's content: a string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WireContent {
    /// Plain text.
    Text(String),
    /// Typed parts (only `text` parts are served).
    Parts(Vec<ContentPart>),
}

/// One part of a content list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentPart {
    /// `text`, `image_url`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// The text of a `text` part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A call as the wire carries it: arguments as JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireToolCall {
    /// Its position in a streamed reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// Its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function and its arguments.
    pub function: WireFunctionCall,
}

fn function_type() -> String {
    "function".to_string()
}

/// The function of a wire call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireFunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments: JSON text (some clients send an object).
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// `tool_choice`: a mode or a named function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WireToolChoice {
    /// `auto`, `none` or `required`.
    Mode(String),
    /// `{"type": "function", "function": {"name": ...}}`.
    Named(NamedToolChoice),
}

/// A named `tool_choice`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedToolChoice {
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function.
    pub function: NamedFunction,
}

/// The function a named `tool_choice` asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedFunction {
    /// Its name.
    pub name: String,
}

impl From<&ToolChoice> for WireToolChoice {
    fn from(choice: &ToolChoice) -> Self {
        match choice {
            ToolChoice::Auto => WireToolChoice::Mode("auto".into()),
            ToolChoice::None => WireToolChoice::Mode("none".into()),
            ToolChoice::Required => WireToolChoice::Mode("required".into()),
            ToolChoice::Named(name) => WireToolChoice::Named(NamedToolChoice {
                kind: function_type(),
                function: NamedFunction { name: name.clone() },
            }),
        }
    }
}

/// `stop`: one string or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StopStrings {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl StopStrings {
    /// The strings.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            StopStrings::One(s) => vec![s],
            StopStrings::Many(v) => v,
        }
    }
}

/// `response_format`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireResponseFormat {
    /// `text`, `json_object` or `json_schema`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// The schema of a `json_schema` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<JsonSchemaFormat>,
}

/// The `json_schema` of a response format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchemaFormat {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

/// `stream_options`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// A last chunk with token usage.
    #[serde(default)]
    pub include_usage: Option<bool>,
}

/// A whole response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The response id.
    #[serde(default)]
    pub id: String,
    /// `chat.completion`.
    #[serde(default)]
    pub object: String,
    /// Seconds since the Unix epoch.
    #[serde(default)]
    pub created: u64,
    /// The model.
    #[serde(default)]
    pub model: String,
    /// The server build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// The choices (one).
    pub choices: Vec<ResponseChoice>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// One choice of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseChoice {
    /// Its index.
    #[serde(default)]
    pub index: u32,
    /// The assistant's message.
    pub message: ResponseMessage,
    /// Always null here.
    #[serde(default)]
    pub logprobs: Option<Value>,
    /// `stop`, `length` or `tool_calls`.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The assistant's message in a response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    /// `assistant`.
    #[serde(default = "assistant_role")]
    pub role: String,
    /// The text (null when the reply is only calls).
    #[serde(default)]
    pub content: Option<String>,
    /// A reasoning block, when the model wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// The calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
}

fn assistant_role() -> String {
    "assistant".into()
}

/// Token usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// Prompt details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// Prompt token details.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    /// Prompt tokens taken from the cache.
    #[serde(default)]
    pub cached_tokens: u64,
}

/// One server-sent chunk of a streamed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    /// The response id.
    pub id: String,
    /// `chat.completion.chunk`.
    pub object: String,
    /// Seconds since the Unix epoch.
    pub created: u64,
    /// The model.
    pub model: String,
    /// The server build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// The choice's delta (none in the usage chunk).
    pub choices: Vec<ChunkChoice>,
    /// Token usage (the last chunk, when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The delta of one choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// Its index.
    pub index: u32,
    /// What this chunk adds.
    pub delta: ChunkDelta,
    /// Always null here.
    pub logprobs: Option<Value>,
    /// Set on the last chunk.
    pub finish_reason: Option<String>,
}

/// What a chunk adds to the message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkDelta {
    /// `assistant`, on the first chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// More content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// More reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Whole calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<WireToolCall>>,
}

impl WireToolCall {
    /// A call with its arguments as JSON text.
    pub fn new(id: Option<String>, name: &str, arguments: &Value) -> Self {
        Self {
            index: None,
            id,
            kind: function_type(),
            function: WireFunctionCall {
                name: name.to_string(),
                arguments: Some(Value::String(match arguments {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })),
            },
        }
    }

    /// The arguments as a JSON value: text parsed (empty text is `{}`), an object as
    /// it is; `Err` with the text when it is not JSON.
    pub fn parsed_arguments(&self) -> Result<Value, String> {
        match &self.function.arguments {
            None | Some(Value::Null) => Ok(Value::Object(Default::default())),
            Some(Value::String(text)) if text.trim().is_empty() => {
                Ok(Value::Object(Default::default()))
            }
            Some(Value::String(text)) => serde_json::from_str(text).map_err(|_| text.clone()),
            Some(other) => Ok(other.clone()),
        }
    }
}

impl WireMessage {
    /// A message as OpenAI servers read it: call arguments as JSON text, ids on calls,
    /// null content only for an assistant turn that only calls.
    pub fn from_message(message: &Message) -> Self {
        let role = match message.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let content = match &message.content {
            Some(text) => Some(WireContent::Text(text.clone())),
            None if message.role == Role::Assistant => None,
            None => Some(WireContent::Text(String::new())),
        };
        let tool_calls = (!message.tool_calls.is_empty()).then(|| {
            message
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    WireToolCall::new(
                        Some(call.id.clone().unwrap_or_else(|| format!("call_{i}"))),
                        &call.function.name,
                        &call.function.arguments,
                    )
                })
                .collect()
        });
        Self {
            role: role.to_string(),
            content,
            tool_calls,
            tool_call_id: message.tool_call_id.clone(),
            name: message.name.clone().filter(|_| message.role == Role::Tool),
        }
    }
}

impl ToolCall {
    /// A call of `name` with `arguments`, with an id.
    pub fn function(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: Some(id.into()),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn history_goes_out_in_openai_shape() {
        let assistant = Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall::function(
                "c1",
                "read_file",
                json!({"path": "a.txt"}),
            )],
            tool_call_id: None,
            name: None,
        };
        let wire = serde_json::to_value(WireMessage::from_message(&assistant)).unwrap();
        assert_eq!(wire["content"], Value::Null);
        assert_eq!(wire["tool_calls"][0]["id"], "c1");
        assert_eq!(
            wire["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a.txt\"}"
        );
        let result = WireMessage::from_message(&Message::tool_result("c1", "read_file", "hello"));
        assert_eq!(
            serde_json::to_value(result).unwrap(),
            json!({"role": "tool", "content": "hello", "tool_call_id": "c1", "name": "read_file"})
        );
    }

    #[test]
    fn requests_and_responses_read_the_shapes_clients_send() {
        let request: ChatRequest = serde_json::from_value(json!({
            "model": "m", "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
            ],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
            "stop": "END", "unknown_field": 1
        }))
        .unwrap();
        assert_eq!(
            request.tool_choice,
            Some(WireToolChoice::Named(NamedToolChoice {
                kind: "function".into(),
                function: NamedFunction { name: "f".into() }
            }))
        );
        assert_eq!(
            request.stop.map(StopStrings::into_vec),
            Some(vec!["END".to_string()])
        );
        let response: ChatResponse = serde_json::from_value(json!({
            "choices": [{"message": {"content": null, "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": ""}}]},
                "finish_reason": "tool_calls"}]
        }))
        .unwrap();
        let call = &response.choices[0].message.tool_calls[0];
        assert_eq!(call.parsed_arguments(), Ok(json!({})));
        let broken = WireToolCall::new(None, "f", &json!("{path: a"));
        assert_eq!(broken.parsed_arguments(), Err("{path: a".to_string()));
    }
}
