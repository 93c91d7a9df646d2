//! The tools of one request, prepared: names checked, schemas sanitized, validators
//! built, and the ways the prompt shows them (sanitized definitions, one-line
//! signatures).

use rein_protocol::{ToolChoice, ToolSpec};
use rein_schema::{sanitize, ArgumentValidator, Limits, Report, Sanitized, SchemaError};
use serde_json::{json, Value};

/// Why a tool list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolSetError {
    /// No tools, but calls were asked for.
    #[error("tool_choice asks for a call but no tools were given")]
    Empty,
    /// Two tools with one name.
    #[error("two tools are named `{0}`; tool names must be unique")]
    Duplicate(String),
    /// A name providers and parsers cannot carry.
    #[error("tool name `{0}` is not allowed: use 1-64 letters, digits, `_` or `-`")]
    IllegalName(String),
    /// tool_choice names a tool that is not in the list.
    #[error("tool_choice names `{0}`, which is not among the tools")]
    UnknownChoice(String),
    /// A schema the sanitizer refused.
    #[error("tool `{tool}`: {error}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is wrong with its schema.
        error: SchemaError,
    },
}

/// How tools are described when the prompt teaches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DescriptionStyle {
    /// The JSON function specs, one per line.
    #[default]
    Full,
    /// One signature line per tool.
    Compact,
}

impl DescriptionStyle {
    /// The setting's name.
    pub fn as_str(self) -> &'static str {
        match self {
            DescriptionStyle::Full => "full",
            DescriptionStyle::Compact => "compact",
        }
    }
}

/// One tool, ready for a turn.
#[derive(Debug)]
pub struct PreparedTool {
    /// The spec as given.
    pub spec: ToolSpec,
    /// The tool's name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// The sanitized schema and its report.
    pub sanitized: Sanitized,
    /// Checks its arguments.
    pub validator: ArgumentValidator,
    /// The original schema did not compile as JSON Schema; validation uses the
    /// canonical one.
    pub validation_degraded: bool,
}

/// The tools of one request: the first [`ToolSet::listed`] are shown in the prompt;
/// any after them are callable (grammar, reader, validation) without being shown — a
/// tool revealed by a search result, so the prompt's prefix and its cached KV stay
/// as they were.
#[derive(Debug, Default)]
pub struct ToolSet {
    tools: Vec<PreparedTool>,
    listed: usize,
}

impl ToolSet {
    /// Checks names and sanitizes every schema; every tool is shown.
    pub fn prepare(specs: &[ToolSpec]) -> Result<Self, ToolSetError> {
        Self::prepare_listing(specs, specs.len())
    }

    /// Like [`ToolSet::prepare`], but only the first `listed` tools are shown in the
    /// prompt; the rest are callable only.
    pub fn prepare_listing(specs: &[ToolSpec], listed: usize) -> Result<Self, ToolSetError> {
        let mut tools: Vec<PreparedTool> = Vec::with_capacity(specs.len());
        for spec in specs {
            let name = &spec.function.name;
            let legal = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !legal {
                return Err(ToolSetError::IllegalName(name.clone()));
            }
            if tools.iter().any(|t| &t.name == name) {
                return Err(ToolSetError::Duplicate(name.clone()));
            }
            let parameters = spec
                .function
                .parameters
                .clone()
                // No parameters: the function takes none (not "any object").
                .map(no_parameters_means_none)
                .unwrap_or_else(
                    || json!({"type": "object", "properties": {}, "additionalProperties": false}),
                );
            let sanitized =
                sanitize(&parameters, Limits::default()).map_err(|error| ToolSetError::Schema {
                    tool: name.clone(),
                    error,
                })?;
            let (validator, validation_degraded) = ArgumentValidator::new(&sanitized);
            tools.push(PreparedTool {
                spec: spec.clone(),
                name: name.clone(),
                description: spec.function.description.clone(),
                sanitized,
                validator,
                validation_degraded,
            });
        }
        let listed = listed.min(tools.len());
        Ok(Self { tools, listed })
    }

    /// The tools shown in the prompt, in order.
    pub fn listed(&self) -> &[PreparedTool] {
        &self.tools[..self.listed]
    }

    /// The specs as given, shown ones first.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }

    /// The tools, in order (shown and callable-only).
    pub fn tools(&self) -> &[PreparedTool] {
        &self.tools
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&PreparedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The tools a call may name under `choice` (none for `none`).
    pub fn offered(&self, choice: &ToolChoice) -> Vec<&PreparedTool> {
        match choice {
            ToolChoice::None => Vec::new(),
            ToolChoice::Named(name) => self.tools.iter().filter(|t| &t.name == name).collect(),
            ToolChoice::Auto | ToolChoice::Required => self.tools.iter().collect(),
        }
    }

    /// Checks that `choice` can be honoured by these tools.
    pub fn check_choice(&self, choice: &ToolChoice) -> Result<(), ToolSetError> {
        match choice {
            ToolChoice::Required if self.is_empty() => Err(ToolSetError::Empty),
            ToolChoice::Named(name) if self.get(name).is_none() => {
                Err(ToolSetError::UnknownChoice(name.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The definitions shown to the model: sanitized schemas, OpenAI shape.
    pub fn definitions(&self) -> Vec<Value> {
        self.listed()
            .iter()
            .map(|t| {
                let mut function = json!({"name": t.name});
                if let Some(d) = &t.description {
                    function["description"] = json!(d);
                }
                function["parameters"] = t.sanitized.schema.to_json();
                json!({"type": "function", "function": function})
            })
            .collect()
    }

    /// The tools as given, one JSON spec per line (`Full`) or one signature line per
    /// tool (`Compact`).
    pub fn describe(&self, style: DescriptionStyle) -> String {
        match style {
            DescriptionStyle::Compact => self.signatures(),
            DescriptionStyle::Full => self
                .listed()
                .iter()
                .map(|t| serde_json::to_string(&t.spec).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// One signature line per tool, generated from its schema.
    pub fn signatures(&self) -> String {
        self.listed()
            .iter()
            .map(|t| crate::signature::signature(&t.spec))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every sanitizer report, by tool.
    pub fn reports(&self) -> impl Iterator<Item = (&str, &Report)> {
        self.tools
            .iter()
            .map(|t| (t.name.as_str(), &t.sanitized.report))
    }
}

/// `{"type": "object", "properties": {}}` is how a tool says it takes no parameters:
/// without `additionalProperties: false` the grammar would allow any keys, and small
/// models fill them with the schema itself (`{"type": "object"}`). Such a schema gets
/// `additionalProperties: false`; a schema without `properties` (a free-form object) is
/// left as it is.
fn no_parameters_means_none(mut parameters: Value) -> Value {
    if let Value::Object(map) = &mut parameters {
        let empty = matches!(map.get("properties"), Some(Value::Object(p)) if p.is_empty());
        let open = [
            "additionalProperties",
            "patternProperties",
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
        ]
        .iter()
        .any(|k| map.contains_key(*k));
        if empty && !open {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    parameters
}
