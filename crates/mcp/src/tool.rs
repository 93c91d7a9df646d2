//! An MCP server's tool as a rein tool: offered as `server__tool`, its schema
//! checked by rein's sanitizer, its calls validated, scheduled (a barrier unless the
//! server marks it read-only), bounded and wrapped as untrusted data like any other.

use std::collections::HashSet;
use std::sync::Arc;

use rein_protocol::{FunctionSpec, ToolSpec};
use rein_tools::{Access, Tool, ToolOutcome, Workspace};
use serde_json::Value;

use crate::result_text;
use crate::server::{CallResult, McpServer};

/// The longest description offered; longer ones are cut.
pub const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// The longest tool name every chat template and provider accepts.
pub const MAX_NAME_LEN: usize = 64;

/// The longest reason given for a schema that cannot be offered.
const MAX_REASON_CHARS: usize = 160;

/// The separator between a server's name and its tool's name.
pub const SEPARATOR: &str = "__";

/// One tool of one server.
pub struct McpTool {
    server: Arc<McpServer>,
    /// The name the server knows it by.
    remote_name: String,
    /// The name the model calls it by.
    name: String,
    spec: ToolSpec,
    read_only: bool,
    /// Kept out of the prompt behind `tool_search` until a search reveals it.
    deferred: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("McpTool")
            .field("name", &self.name)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl McpTool {
    /// The tool `definition` of `server`, named so that no name in `taken` is
    /// used twice (the name is added to it). `None` when its schema cannot be
    /// offered: the reason says why.
    pub fn new(
        server: &Arc<McpServer>,
        definition: &rmcp::model::Tool,
        taken: &mut HashSet<String>,
    ) -> Result<Self, String> {
        let remote_name = definition.name.to_string();
        let name = offered_name(server.name(), &remote_name, taken);
        let parameters = Value::Object((*definition.input_schema).clone());
        rein_schema::sanitize(&parameters, rein_schema::Limits::default()).map_err(|error| {
            let reason = result_text::one_short_line(&error.to_string(), MAX_REASON_CHARS);
            format!("`{remote_name}`: its input schema cannot be used: {reason}")
        })?;
        let description = definition
            .description
            .as_deref()
            .map(|text| bounded_description(text, server.name()))
            .or_else(|| Some(format!("A tool of the MCP server `{}`.", server.name())));
        let read_only = definition
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.read_only_hint)
            .unwrap_or(false);
        taken.insert(name.clone());
        Ok(Self {
            server: Arc::clone(server),
            remote_name,
            spec: ToolSpec {
                kind: "function".to_string(),
                function: FunctionSpec {
                    name: name.clone(),
                    description,
                    parameters: Some(parameters),
                },
            },
            name,
            read_only,
            deferred: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Keeps it out of the prompt behind `tool_search` (or offers it again).
    pub fn set_deferred(&self, deferred: bool) {
        self.deferred
            .store(deferred, std::sync::atomic::Ordering::Relaxed);
    }

    /// The name the server knows it by.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// Whether the server marks it read-only (it then runs beside other reads).
    pub fn read_only(&self) -> bool {
        self.read_only
    }
}

/// `server__tool`, legal as a function name everywhere (`[A-Za-z0-9_-]`, at most 64
/// bytes) and not in `taken`: any other character becomes `_`, a clash gets `_2`,
/// `_3`… .
pub fn offered_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let base: String = format!("{server}{SEPARATOR}{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME_LEN)
        .collect();
    if !taken.contains(&base) {
        return base;
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let kept: String = base.chars().take(MAX_NAME_LEN - suffix.len()).collect();
            format!("{kept}{suffix}")
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(base)
}

/// The server's description, cut to [`MAX_DESCRIPTION_CHARS`].
fn bounded_description(text: &str, server: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return format!("A tool of the MCP server `{server}`.");
    }
    let mut kept: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        kept.push('…');
    }
    kept
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        if self.read_only {
            Access::Read(Vec::new())
        } else {
            Access::Barrier
        }
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        let arguments = match args {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            other => {
                return ToolOutcome::failure(format!(
                    "`{}` takes a JSON object of arguments, not {other}",
                    self.name
                ))
            }
        };
        let max_chars = workspace.limits().output_chars;
        match self.server.call_blocking(&self.remote_name, arguments) {
            CallResult::Answered(result) => {
                let (text, is_error) = result_text::render(&result, max_chars);
                if is_error {
                    ToolOutcome::failure(text)
                } else {
                    ToolOutcome::success(text)
                }
            }
            CallResult::Failed { reason, timed_out } => ToolOutcome {
                timed_out,
                ..ToolOutcome::failure(reason)
            },
        }
    }

    fn untrusted_output(&self) -> bool {
        true
    }

    fn deferred(&self) -> bool {
        self.deferred.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_names_are_legal_and_unique() {
        let mut taken = HashSet::new();
        assert_eq!(offered_name("fs", "a.b/c", &taken), "fs__a_b_c");
        let first = offered_name("files", "read file", &taken);
        assert_eq!(first, "files__read_file");
        taken.insert(first);
        assert_eq!(
            offered_name("files", "read/file", &taken),
            "files__read_file_2"
        );
        let long = offered_name("s", &"x".repeat(100), &taken);
        assert_eq!(long.len(), 64);
        taken.insert(long.clone());
        let again = offered_name("s", &"x".repeat(100), &taken);
        assert_eq!(again.len(), 64);
        assert!(again.ends_with("_2") && again != long);
    }

    #[test]
    fn descriptions_are_bounded() {
        assert_eq!(
            bounded_description("  ", "srv"),
            "A tool of the MCP server `srv`."
        );
        let long = bounded_description(&"d".repeat(5_000), "srv");
        assert_eq!(long.chars().count(), MAX_DESCRIPTION_CHARS + 1);
    }
}
