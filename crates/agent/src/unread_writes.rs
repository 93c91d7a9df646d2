//! A write over an existing file the run has not looked at (`full`): not run. A small
//! model forced to make a call writes `{"path": "settings.py", "content": "new
//! content"}` over a file it never read; the write would lose what the file held, so
//! its result asks for the read first and names the edit tool.

use std::path::PathBuf;

use rein_tools::Workspace;
use serde_json::Value;

use crate::tool_names::{EDIT_TOOL, READ_TOOL, WRITE_TOOL};
use crate::validate::ReadyCall;

/// Tools whose successful call on a file shows the model that file (or was written
/// by it).
const SEEING_TOOLS: [&str; 4] = [READ_TOOL, WRITE_TOOL, EDIT_TOOL, "search"];

/// The file (resolved) a successful `call` showed or wrote, if it names one.
pub(crate) fn file_seen(call: &ReadyCall, workspace: &Workspace) -> Option<PathBuf> {
    if !SEEING_TOOLS.contains(&call.name.as_str()) {
        return None;
    }
    let path = call.arguments.get("path").and_then(Value::as_str)?;
    let resolved = workspace.resolve(path).ok()?;
    resolved.is_file().then_some(resolved)
}

/// Why `call` is not run, when it writes over an existing, non-empty file that is not
/// among `seen`: the file's size, and the read to make first (`read_call`, written in
/// the model's call syntax).
pub(crate) fn unread_overwrite_note(
    call: &ReadyCall,
    workspace: &Workspace,
    seen: &std::collections::HashSet<PathBuf>,
    read_call: impl Fn(&str) -> String,
) -> Option<String> {
    if call.name != WRITE_TOOL {
        return None;
    }
    let path = call.arguments.get("path").and_then(Value::as_str)?;
    let resolved = workspace.resolve(path).ok()?;
    let held = std::fs::read(&resolved).ok()?;
    if held.is_empty() || seen.contains(&resolved) {
        return None;
    }
    let lines = held.iter().filter(|b| **b == b'\n').count().max(1);
    Some(format!(
        "Not run: `{path}` already exists ({} bytes, {lines} line{}) and you have not read it; this write would replace all of it. Read it first:\n{}\nthen change only the part the task names, with edit_file.",
        held.len(),
        if lines == 1 { "" } else { "s" },
        read_call(path)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &str) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: WRITE_TOOL.into(),
            arguments: json!({"path": path, "content": "new content"}),
        }
    }

    #[test]
    fn a_write_over_an_unread_file_is_refused_until_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.py"), "a = 1\nb = 2\n").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let mut seen = std::collections::HashSet::new();
        let read_call = |path: &str| format!("read_file {path}");
        let note = unread_overwrite_note(&write("settings.py"), &workspace, &seen, read_call)
            .unwrap_or_default();
        assert!(
            note.starts_with("Not run: `settings.py` already exists (12 bytes, 2 lines)")
                && note.contains("read_file settings.py"),
            "{note}"
        );
        // New files, empty files and files the run has read are written.
        for path in ["new.txt", "empty.txt"] {
            assert_eq!(
                unread_overwrite_note(&write(path), &workspace, &seen, read_call),
                None
            );
        }
        let read = ReadyCall {
            id: "call_2".into(),
            name: READ_TOOL.into(),
            arguments: json!({"path": "./settings.py"}),
        };
        seen.extend(file_seen(&read, &workspace));
        assert_eq!(
            unread_overwrite_note(&write("settings.py"), &workspace, &seen, read_call),
            None
        );
    }
}
