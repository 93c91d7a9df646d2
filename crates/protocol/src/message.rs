//! Chat messages and tool calls.

use serde::{Deserialize, Serialize};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// One message of a conversation, serialized as chat templates read it: `role`,
/// `content`, and for assistants `tool_calls`, for tool results `tool_call_id`/`name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text; `None` for an assistant turn that only calls tools.
    pub content: Option<String>,
    /// Calls the assistant made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    /// A tool's result, answering the call `id` of tool `name`.
    pub fn tool_result(
        id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(id.into()),
            name: Some(name.into()),
            ..Self::text(Role::Tool, content)
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }
}

/// A call of one tool, as templates expect it: `{"type": "function", "function": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, when the client gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_string()
}

/// The function a tool call names and its arguments (a JSON object, not a string).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub arguments: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_in_template_shape() {
        let raw = json!([
            {"role": "system", "content": "be brief"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "read_file", "arguments": {"path": "a.txt"}}}
            ]},
            {"role": "tool", "content": "hello", "tool_call_id": "c1", "name": "read_file"}
        ]);
        let messages: Vec<Message> = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(messages[1].tool_calls[0].function.name, "read_file");
        assert_eq!(serde_json::to_value(&messages).unwrap(), raw);
    }
}
