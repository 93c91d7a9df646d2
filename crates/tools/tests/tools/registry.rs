//! The registry: order, specs, and dropping unavailable
//! tools with the sentences that mention them.

use std::sync::Arc;

use rein_tools::{Access, ReadFile, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use crate::support::workspace;

/// A tool that is never available, standing in for one that needs a missing program.
struct Unavailable(&'static str);

impl Tool for Unavailable {
    fn name(&self) -> &str {
        self.0
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        serde_json::from_value(json!({"type": "function", "function": {"name": self.0}})).unwrap()
    }

    fn available(&self, _workspace: &Workspace) -> Result<(), String> {
        Err("not installed".to_string())
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Barrier
    }

    fn call(&self, _args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::failure("unavailable")
    }
}

#[test]
fn builtin_tools_come_in_order_with_object_schemas() {
    let registry = Registry::builtin();
    assert_eq!(
        registry.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "search",
            "list_dir",
            "shell",
            "query_data",
            "replace_in_files"
        ]
    );
    for spec in registry.specs() {
        assert_eq!(spec.kind, "function");
        let parameters = spec.function.parameters.unwrap();
        assert_eq!(parameters["type"], "object", "{}", spec.function.name);
        assert!(spec.function.description.unwrap().ends_with('.'));
    }
    assert!(registry.get("shell").is_some());
    assert!(registry.get("nope").is_none());
}

#[test]
fn unavailable_tools_are_dropped_and_mentions_of_them_removed() {
    let (_dir, workspace) = workspace();
    let mut registry = Registry::builtin();
    registry.add(Arc::new(Unavailable("list_dir")));
    assert_eq!(
        registry.names()[4],
        "list_dir",
        "a tool with the same name is replaced in place"
    );

    let available = registry.available(&workspace);
    assert_eq!(
        available.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "search",
            "shell",
            "query_data",
            "replace_in_files"
        ]
    );
    let read_file = available.get("read_file").unwrap();
    let description = read_file.spec().function.description.unwrap();
    assert_eq!(
        description,
        "Read a text file; each line is shown with its number. A long file is shown in windows, and the reply says how to continue."
    );
    assert_eq!(
        available.get("write_file").unwrap().spec(),
        Registry::builtin().get("write_file").unwrap().spec()
    );

    std::fs::write(workspace.root().join("a.txt"), "kept working\n").unwrap();
    let outcome = read_file.call(&json!({"path": "a.txt"}), &workspace);
    assert!(outcome.text.contains("kept working"));
}

#[test]
fn every_builtin_is_available_here_and_tools_can_be_added() {
    let (_dir, workspace) = workspace();
    assert_eq!(Registry::builtin().available(&workspace).names().len(), 8);
    let mut registry = Registry::empty();
    assert!(registry.names().is_empty());
    registry.add(Arc::new(ReadFile));
    assert_eq!(registry.names(), ["read_file"]);
    assert!(Registry::builtin().without("shell").get("shell").is_none());
    assert_eq!(Registry::builtin().without("shell").names().len(), 7);
}
