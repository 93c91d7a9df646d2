//! Tool definitions as OpenAI-compatible clients send them.

use serde::{Deserialize, Serialize};

/// One tool: `{"type": "function", "function": {"name", "description", "parameters"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function.
    pub function: FunctionSpec,
}

fn function_type() -> String {
    "function".to_string()
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionSpec {
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON schema of its arguments (any object when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<serde_json::Value>,
}
