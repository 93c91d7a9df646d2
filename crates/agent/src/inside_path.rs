//! A path outside the workspace that a model took for its root (`/workspace`,
//! `/home/user/project/store/accounts.py`): the failed call's result ends with the
//! same call with the path inside the workspace — the longest tail of it that exists
//! there, or the root itself for a search or a listing — so the error names the next
//! call to make rather than only what was wrong.

use rein_engine::Backend;
use rein_tools::Workspace;
use serde_json::Value;

use crate::agent::Agent;
use crate::call_outcome::CallOutcome;
use crate::validate::ReadyCall;

/// The words of the workspace's refusal of a path beyond it.
const OUTSIDE: &str = "is outside the workspace";

/// Tools for which the workspace root is a fair place to start (a search, a listing).
const ROOT_TOOLS: [&str; 2] = ["search", "list_dir"];

/// The path inside `workspace` that `path` (outside it) most likely meant: the longest
/// tail of its components that exists there, else `.` for the tools that take a
/// directory to start from (`tool`).
pub(crate) fn inside_path(path: &str, workspace: &Workspace, tool: &str) -> Option<String> {
    let components: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .collect();
    let existing = (0..components.len())
        .map(|start| components[start..].join("/"))
        .find(|tail| {
            workspace
                .resolve(tail)
                .is_ok_and(|resolved| resolved.exists())
        });
    existing.or_else(|| ROOT_TOOLS.contains(&tool).then(|| ".".to_string()))
}

impl<B: Backend> Agent<B> {
    /// Ends a call's refusal of a path outside the workspace with the same call
    /// inside it, unless the task itself names that path (it means the outside one).
    pub(crate) fn path_inside_note(&self, task: &str, call: &ReadyCall, outcome: &mut CallOutcome) {
        if outcome.ok || !outcome.text.contains(OUTSIDE) {
            return;
        }
        let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
            return;
        };
        if task.contains(path) {
            return;
        }
        let Some(inside) = inside_path(path, &self.executor.workspace, &call.name) else {
            return;
        };
        let mut arguments = call.arguments.clone();
        arguments["path"] = Value::String(inside);
        outcome.text.push_str(&format!(
            "\nPaths are relative to the workspace root (`.`), not `{path}`. The same call inside the workspace is:\n{}",
            self.info.family.call_text(&call.name, &arguments)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_existing_tail_or_the_root_for_a_search() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("store")).unwrap();
        std::fs::write(
            dir.path().join("store/accounts.py"),
            "class UserRepository: pass\n",
        )
        .unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        assert_eq!(
            inside_path(
                "/home/user/project/store/accounts.py",
                &workspace,
                "read_file"
            )
            .as_deref(),
            Some("store/accounts.py")
        );
        assert_eq!(
            inside_path("/workspace/store", &workspace, "list_dir").as_deref(),
            Some("store")
        );
        assert_eq!(
            inside_path("/workspace", &workspace, "search").as_deref(),
            Some(".")
        );
        assert_eq!(
            inside_path("/workspace", &workspace, "list_dir").as_deref(),
            Some(".")
        );
        // A file nothing in the workspace holds: no guess for a read.
        assert_eq!(inside_path("/etc/hosts", &workspace, "read_file"), None);
    }
}
