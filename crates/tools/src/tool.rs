//! The interface every tool implements.

use crate::outcome::{Access, ToolOutcome};
use crate::workspace::Workspace;

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// Its OpenAI-style function spec, with a JSON schema of the arguments.
    fn spec(&self) -> rein_protocol::ToolSpec;

    /// Whether it can run in this workspace; the error says why not.
    fn available(&self, _workspace: &Workspace) -> Result<(), String> {
        Ok(())
    }

    /// The paths a call with these arguments reads or writes. Arguments whose paths
    /// cannot be resolved give `Access::Read(vec![])`: the call will fail on its own.
    fn access(&self, args: &serde_json::Value, workspace: &Workspace) -> Access;

    /// Runs the call. Missing or mistyped arguments give `ok = false` with a message
    /// naming the parameter.
    fn call(&self, args: &serde_json::Value, workspace: &Workspace) -> ToolOutcome;

    /// Whether a successful call changes source files (`write_file`, `edit_file`).
    fn is_source_edit(&self) -> bool {
        false
    }

    /// Whether a call with these arguments looks like a build or test run.
    fn is_verification(&self, _args: &serde_json::Value) -> bool {
        false
    }

    /// Whether the output carries text from outside the workspace's own files (command
    /// output, fetched content): the loop wraps it as untrusted data.
    fn untrusted_output(&self) -> bool {
        false
    }

    /// Whether the tool is kept out of the prompt until a search reveals it (one of
    /// many MCP tools behind `tool_search`): callable only after a result names it
    /// in [`ToolOutcome::reveals`].
    fn deferred(&self) -> bool {
        false
    }

    /// Whether the tool only finds other tools (`tool_search`): a means to a step,
    /// never a step of the task, so a call of it left waiting holds no answer.
    fn finds_tools(&self) -> bool {
        false
    }
}
