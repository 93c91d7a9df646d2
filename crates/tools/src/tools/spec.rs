//! Building OpenAI-style function specs.

use rein_protocol::{FunctionSpec, ToolSpec};
use serde_json::Value;

/// A function spec with this name, description and JSON schema of the arguments.
pub(crate) fn function_spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        kind: "function".to_string(),
        function: FunctionSpec {
            name: name.to_string(),
            description: Some(description.to_string()),
            parameters: Some(parameters),
        },
    }
}
