//! Calls the user approves before they run (`rein run --approve`): which calls a
//! policy asks about, what the user is shown (the command, or the change a write would
//! make, as a diff), and what the model is told when the user says no.

use std::str::FromStr;

use rein_tools::{Access, Workspace};
use serde_json::Value;

use crate::tool_names::{EDIT_TOOL, SHELL_TOOL, WRITE_TOOL};

/// Which calls wait for the user's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// None: every call runs (the sandbox is the guard).
    #[default]
    Never,
    /// Every call that may change the workspace: file writes, edits, moves and
    /// deletions, and shell commands (which can change anything).
    Writes,
    /// Shell commands only.
    Shell,
    /// Every call, reads too.
    Always,
}

impl ApprovalPolicy {
    /// The policy's name, as `--approve` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Writes => "writes",
            Self::Shell => "shell",
            Self::Always => "always",
        }
    }

    /// Whether a call of `tool` with `access` waits for approval.
    pub fn asks(self, tool: &str, access: &Access) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::Shell => tool == SHELL_TOOL,
            Self::Writes => !matches!(access, Access::Read(_)),
        }
    }
}

impl FromStr for ApprovalPolicy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "never" => Ok(Self::Never),
            "writes" => Ok(Self::Writes),
            "shell" => Ok(Self::Shell),
            "always" => Ok(Self::Always),
            other => Err(format!(
                "the approval policy must be never, writes, shell or always, got `{other}`"
            )),
        }
    }
}

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// What the call would do, for a person: the command, or the write as a diff.
    pub preview: String,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run the call as it is.
    Run,
    /// Run it with these arguments instead.
    Edit(Value),
    /// Do not run it.
    Refuse,
}

/// Asks the user about a call (a terminal prompt in `rein run`).
pub trait Approver: Send + Sync {
    /// The user's answer for `request`; may block while the user decides.
    fn decide(&self, request: &ApprovalRequest) -> Decision;
}

/// What the model reads when the user refused a call of `tool`.
pub(crate) fn refused_note(tool: &str) -> String {
    format!(
        "Not run: the user declined this `{tool}` call, and nothing changed. Do not make it again as it is: take another way, or answer and say what you would have done."
    )
}

/// What a call of `tool` with `arguments` would do, for a person deciding on it.
pub fn preview(tool: &str, arguments: &Value, workspace: &Workspace) -> String {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    match tool {
        SHELL_TOOL => match text("command") {
            Some(command) => format!("$ {command}"),
            None => plain(tool, arguments),
        },
        WRITE_TOOL => match (text("path"), text("content")) {
            (Some(path), Some(content)) => {
                let before = current_text(workspace, path);
                change(path, before.as_deref(), content)
            }
            _ => plain(tool, arguments),
        },
        EDIT_TOOL => match (text("path"), text("old_string"), text("new_string")) {
            (Some(path), Some(old), Some(new)) => match current_text(workspace, path) {
                Some(before) if before.contains(old) => {
                    let after = before.replacen(old, new, 1);
                    change(path, Some(&before), &after)
                }
                _ => format!("edit `{path}`: replace\n{old}\nwith\n{new}"),
            },
            _ => plain(tool, arguments),
        },
        _ => plain(tool, arguments),
    }
}

/// A call as its tool name and JSON arguments.
fn plain(tool: &str, arguments: &Value) -> String {
    format!("{tool} {arguments}")
}

/// The text of the workspace file `path`, when it is one.
fn current_text(workspace: &Workspace, path: &str) -> Option<String> {
    let resolved = workspace.resolve(path).ok()?;
    std::fs::read_to_string(resolved).ok()
}

/// `path` going from `before` (none: a new file) to `after`, as a unified diff.
fn change(path: &str, before: Option<&str>, after: &str) -> String {
    let old = before.unwrap_or_default();
    let diff = similar::TextDiff::from_lines(old, after);
    let (from, to) = match before {
        Some(_) => (format!("a/{path}"), format!("b/{path}")),
        None => ("/dev/null".to_string(), format!("b/{path}")),
    };
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    match body.is_empty() {
        true => format!("`{path}`: no change"),
        false => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_tools::ToolLimits;
    use serde_json::json;

    #[test]
    fn each_policy_asks_about_its_calls() {
        let read = Access::Read(Vec::new());
        let write = Access::Write(Vec::new());
        assert!(!ApprovalPolicy::Never.asks("shell", &Access::Barrier));
        assert!(ApprovalPolicy::Writes.asks("write_file", &write));
        assert!(ApprovalPolicy::Writes.asks("shell", &Access::Barrier));
        assert!(!ApprovalPolicy::Writes.asks("read_file", &read));
        assert!(ApprovalPolicy::Shell.asks("shell", &Access::Barrier));
        assert!(!ApprovalPolicy::Shell.asks("write_file", &write));
        assert!(ApprovalPolicy::Always.asks("read_file", &read));
        assert_eq!(
            "writes".parse::<ApprovalPolicy>(),
            Ok(ApprovalPolicy::Writes)
        );
        let error = "sometimes".parse::<ApprovalPolicy>().unwrap_err();
        assert!(error.contains("`sometimes`"), "{error}");
    }

    #[test]
    fn a_write_is_shown_as_a_diff_and_a_command_as_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "one\ntwo\nthree\n").unwrap();
        let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        let shown = preview(
            "write_file",
            &json!({"path": "notes.md", "content": "one\n2\nthree\n"}),
            &workspace,
        );
        assert!(shown.contains("--- a/notes.md"), "{shown}");
        assert!(shown.contains("-two\n+2\n"), "{shown}");
        let shown = preview(
            "edit_file",
            &json!({"path": "notes.md", "old_string": "three", "new_string": "3"}),
            &workspace,
        );
        assert!(shown.contains("-three\n+3\n"), "{shown}");
        let shown = preview(
            "write_file",
            &json!({"path": "new.txt", "content": "hello\n"}),
            &workspace,
        );
        assert!(
            shown.contains("--- /dev/null") && shown.contains("+hello"),
            "{shown}"
        );
        let shown = preview("shell", &json!({"command": "ls -la"}), &workspace);
        assert_eq!(shown, "$ ls -la");
        // Nothing was written by showing.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
            "one\ntwo\nthree\n"
        );
    }
}
