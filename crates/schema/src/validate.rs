//! Checking new tool-call arguments: strict JSON, an object, narrow coercion, names
//! restored, then validation against the original schema (type names normalized).

use serde_json::Value;

use crate::{Sanitized, Schema};

/// Why arguments were refused, in words a model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// The text is not JSON.
    #[error("arguments are not valid JSON: {0}")]
    NotJson(String),
    /// The JSON is not an object.
    #[error("arguments must be a JSON object, got {0}")]
    NotAnObject(String),
    /// A parameter does not match the schema.
    #[error("parameter `{parameter}`: {message}")]
    Invalid {
        /// The parameter's path (`days`, `opts/limit`, `/` for the whole object).
        parameter: String,
        /// What is wrong, naming the expected type and the value received.
        message: String,
    },
}

/// A validator for `schema` that checks `format`s too (the grammar writes them, and
/// a call written without the grammar must meet them as well).
fn compile(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
}

/// Checks the arguments of one tool.
pub struct ArgumentValidator {
    schema: Schema,
    /// `None` only if neither the original nor the canonical schema compiles.
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// A validator for `sanitized`. When the original schema does not compile as JSON
    /// Schema, the canonical schema (with the original names) is used instead, and
    /// the returned flag says so.
    pub fn new(sanitized: &Sanitized) -> (Self, bool) {
        let schema = sanitized.schema.clone();
        if let Ok(validator) = compile(&sanitized.validation) {
            return (
                Self {
                    schema,
                    validator: Some(validator),
                },
                false,
            );
        }
        let validator = compile(&original_names_schema(&schema)).ok();
        (Self { schema, validator }, true)
    }

    /// Parses, coerces, restores names and validates; returns the arguments as the
    /// tool declared them.
    pub fn check(&self, arguments: &str) -> Result<Value, ArgumentError> {
        let parsed: Value =
            serde_json::from_str(arguments).map_err(|e| ArgumentError::NotJson(e.to_string()))?;
        self.check_value(parsed)
    }

    /// Like [`check`](Self::check) for an already parsed value.
    pub fn check_value(&self, value: Value) -> Result<Value, ArgumentError> {
        if !value.is_object() {
            return Err(ArgumentError::NotAnObject(short(&value)));
        }
        let restored = self.schema.restore_names(&self.schema.coerce(value));
        let first_error = self
            .validator
            .as_ref()
            .and_then(|v| v.iter_errors(&restored).next());
        if let Some(error) = first_error {
            let pointer = error.instance_path().to_string();
            let parameter = if pointer.is_empty() {
                "/".to_string()
            } else {
                pointer.trim_start_matches('/').to_string()
            };
            return Err(ArgumentError::Invalid {
                parameter,
                message: error.to_string(),
            });
        }
        Ok(restored)
    }
}

/// The canonical schema with the tool's own property names.
fn original_names_schema(schema: &Schema) -> Value {
    fn rename(schema: &Schema) -> Schema {
        use crate::SchemaKind;
        let kind = match &schema.kind {
            SchemaKind::Object {
                properties,
                additional,
            } => SchemaKind::Object {
                properties: properties
                    .iter()
                    .map(|p| crate::Property {
                        name: p.original_name.clone(),
                        original_name: p.original_name.clone(),
                        required: p.required,
                        schema: rename(&p.schema),
                    })
                    .collect(),
                additional: additional.as_ref().map(|a| Box::new(rename(a))),
            },
            SchemaKind::Array {
                items,
                min_items,
                max_items,
            } => SchemaKind::Array {
                items: Box::new(rename(items)),
                min_items: *min_items,
                max_items: *max_items,
            },
            SchemaKind::AnyOf(branches) => SchemaKind::AnyOf(branches.iter().map(rename).collect()),
            other => other.clone(),
        };
        Schema {
            kind,
            description: schema.description.clone(),
        }
    }
    rename(schema).to_json()
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}
