//! One-line signatures of tools, generated from their JSON schemas:
//! `read_file(path: string, offset?: integer) - Read a text file...`.

use rein_protocol::ToolSpec;
use serde_json::Value;

/// The signature line of one tool: parameters in schema order, optional ones marked
/// `?`, enums as `"a"|"b"`, then the first sentence of the description.
pub fn signature(spec: &ToolSpec) -> String {
    let function = &spec.function;
    let parameters = function.parameters.as_ref();
    let required: Vec<&str> = parameters
        .and_then(|schema| schema.get("required"))
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let listed: Vec<String> = parameters
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, schema)| {
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{name}{optional}: {}", type_text(schema))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut line = format!("{}({})", function.name, listed.join(", "));
    if let Some(summary) = function
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|text| !text.is_empty())
    {
        line.push_str(" - ");
        line.push_str(summary);
    }
    line
}

/// A compact rendering of a property's type.
fn type_text(schema: &Value) -> String {
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        let rendered: Vec<String> = choices.iter().map(Value::to_string).collect();
        return rendered.join("|");
    }
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "array" => {
            let items = schema
                .get("items")
                .map_or_else(|| "any".to_string(), type_text);
            format!("{items}[]")
        }
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let names: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            names.join("|")
        }
        _ => "any".to_string(),
    }
}

/// The text up to and including the first sentence end (`. `, `! `, `? ` or a
/// line break).
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let bytes = text.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        let next = bytes.get(index + 1);
        if byte == b'\n' {
            return text[..index].trim_end();
        }
        if matches!(byte, b'.' | b'!' | b'?') && next.is_none_or(|next| next.is_ascii_whitespace())
        {
            return &text[..=index];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::FunctionSpec;
    use serde_json::json;

    fn spec(parameters: Value, description: &str) -> ToolSpec {
        ToolSpec {
            kind: "function".to_string(),
            function: FunctionSpec {
                name: "demo".to_string(),
                description: Some(description.to_string()),
                parameters: Some(parameters),
            },
        }
    }

    #[test]
    fn optional_parameters_enums_and_arrays_are_rendered() {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "mode": {"type": "string", "enum": ["content", "files"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "value": {"type": ["integer", "null"]},
                "free": {}
            },
            "required": ["path"]
        });
        assert_eq!(
            signature(&spec(parameters, "Do a thing. More detail here.")),
            "demo(path: string, mode?: \"content\"|\"files\", tags?: string[], value?: integer|null, free?: any) - Do a thing."
        );
    }

    #[test]
    fn a_tool_without_parameters_or_description() {
        let bare = ToolSpec {
            kind: "function".to_string(),
            function: FunctionSpec {
                name: "ping".to_string(),
                description: None,
                parameters: None,
            },
        };
        assert_eq!(signature(&bare), "ping()");
        assert_eq!(first_sentence("v1.2 is out. Yes"), "v1.2 is out.");
    }
}
