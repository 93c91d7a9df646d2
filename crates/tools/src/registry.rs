//! The ordered set of tools offered to the model, and their descriptions.

use std::sync::Arc;

use serde_json::Value;

use crate::description_cleanup::{mentions_any, without_mentions};
use crate::outcome::{Access, ToolOutcome};
use crate::tool::Tool;
use crate::tools::{
    EditFile, ListDir, QueryData, ReadFile, ReplaceInFiles, Search, Shell, WriteFile,
};
use crate::workspace::Workspace;

/// An ordered list of tools.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// The built-in tools: `read_file`, `write_file`, `edit_file`, `search`,
    /// `list_dir`, `shell`, `query_data`, `replace_in_files`, in that order.
    pub fn builtin() -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadFile),
            Arc::new(WriteFile),
            Arc::new(EditFile),
            Arc::new(Search),
            Arc::new(ListDir),
            Arc::new(Shell),
            Arc::new(QueryData),
            Arc::new(ReplaceInFiles),
        ];
        Self { tools }
    }

    /// No tools.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Adds a tool at the end; a tool with the same name is replaced in place.
    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        match self
            .tools
            .iter()
            .position(|existing| existing.name() == tool.name())
        {
            Some(index) => self.tools[index] = tool,
            None => self.tools.push(tool),
        }
    }

    /// The tools that can run in `workspace`. Kept tools whose descriptions mention
    /// a dropped tool by name lose the sentences that do.
    pub fn available(&self, workspace: &Workspace) -> Self {
        let (kept, dropped): (Vec<_>, Vec<_>) =
            self.tools
                .iter()
                .partition(|tool| match tool.available(workspace) {
                    Ok(()) => true,
                    Err(reason) => {
                        tracing::warn!("{}: {reason}", tool.name());
                        false
                    }
                });
        let absent: Vec<&str> = dropped.iter().map(|tool| tool.name()).collect();
        let tools = kept
            .into_iter()
            .map(|tool| {
                let spec = tool.spec();
                let described = serde_json::to_string(&spec).unwrap_or_default();
                if absent.is_empty() || !mentions_any(&described, &absent) {
                    return Arc::clone(tool);
                }
                let cleaned = without_mentions(spec, &absent);
                Arc::new(Redescribed {
                    inner: Arc::clone(tool),
                    spec: cleaned,
                }) as Arc<dyn Tool>
            })
            .collect();
        Self { tools }
    }

    /// The same tools without the one named `name`.
    pub fn without(&self, name: &str) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|tool| tool.name() != name)
                .cloned()
                .collect(),
        }
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// The tools' specs, in order.
    pub fn specs(&self) -> Vec<rein_protocol::ToolSpec> {
        self.tools.iter().map(|tool| tool.spec()).collect()
    }
}

/// A tool offered with a rewritten spec; everything else is the inner tool's.
struct Redescribed {
    inner: Arc<dyn Tool>,
    spec: rein_protocol::ToolSpec,
}

impl Tool for Redescribed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        self.spec.clone()
    }

    fn available(&self, workspace: &Workspace) -> Result<(), String> {
        self.inner.available(workspace)
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        self.inner.access(args, workspace)
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        self.inner.call(args, workspace)
    }

    fn is_source_edit(&self) -> bool {
        self.inner.is_source_edit()
    }

    fn is_verification(&self, args: &Value) -> bool {
        self.inner.is_verification(args)
    }

    fn untrusted_output(&self) -> bool {
        self.inner.untrusted_output()
    }

    fn deferred(&self) -> bool {
        self.inner.deferred()
    }
}
