//! `write_file`: create or replace a whole file, atomically.

use super::search_copy::search_copy_refusal;
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use super::spec::function_spec;
use crate::args::{required_string, write_access};
use crate::atomic_write::write_atomically;
use crate::file_kind::{write_refusal, FileKind};
use crate::line_changes::removed_lines_summary;
use crate::outcome::{Access, ToolOutcome};
use crate::similar_files::same_name_files;
use crate::text::{count_lines, plural};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Creates or replaces a file with the given content; parent directories are
/// created. The write is atomic: a temporary file in the same directory, renamed.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteFile;

const NAME: &str = "write_file";

impl Tool for WriteFile {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Create a file, or replace its whole content; parent directories are created. To change part of an existing file, use edit_file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the workspace root."},
                    "content": {"type": "string", "description": "The complete new content of the file."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        write_access(args, workspace)
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        let parsed = required_string(args, "path")
            .and_then(|path| Ok((path, required_string(args, "content")?)));
        match parsed {
            Ok((path, content)) => write(workspace, path, content),
            Err(error) => error.into_outcome(NAME),
        }
    }

    fn is_source_edit(&self) -> bool {
        true
    }
}

fn write(workspace: &Workspace, path: &str, content: &str) -> ToolOutcome {
    let resolved = match workspace.resolve(path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let shown = workspace.relative(&resolved);
    let previous = match fs::metadata(&resolved) {
        Ok(metadata) => {
            if let Some(refusal) = write_refusal(FileKind::of(&metadata.file_type()), &shown) {
                return ToolOutcome::failure(refusal);
            }
            match fs::read(&resolved) {
                Ok(bytes) => Some(bytes),
                Err(error) => {
                    return ToolOutcome::failure(format!(
                        "cannot read the current `{shown}`: {error}."
                    ))
                }
            }
        }
        Err(_) => None,
    };
    if previous.as_deref() == Some(content.as_bytes()) {
        return ToolOutcome::success(format!(
            "No change: `{shown}` already has exactly this content."
        ));
    }
    if let Some(refusal) = previous
        .as_deref()
        .and_then(|old| search_copy_refusal(&shown, &String::from_utf8_lossy(old), content))
    {
        return ToolOutcome::failure(refusal);
    }
    // A new file named like files elsewhere (`services/VERSION` next to
    // `services/auth/VERSION`) may be a write to the wrong place: said after it.
    let namesakes = match previous {
        None => same_name_files(workspace, &resolved, NAMESAKES_SHOWN),
        Some(_) => Vec::new(),
    };
    let created_directories = match create_parent(&resolved) {
        Ok(created) => created,
        Err(error) => {
            return ToolOutcome::failure(format!(
                "cannot create the directory for `{shown}`: {error}. Check the path with list_dir."
            ))
        }
    };
    if let Err(error) = write_atomically(&resolved, content.as_bytes()) {
        return ToolOutcome::failure(format!("cannot write `{shown}`: {error}."));
    }
    let size = format!(
        "{}, {}",
        plural(content.len(), "byte"),
        plural(count_lines(content), "line")
    );
    let text = match previous {
        Some(previous) => {
            let previous_text = String::from_utf8_lossy(&previous);
            let lines = removed_lines_summary(&previous_text, content)
                .filter(|_| workspace.limits().result_context)
                .map(|summary| format!(": {summary}"))
                .unwrap_or_default();
            format!(
                "Replaced `{shown}` ({size}; it had {}, {}){lines}.",
                plural(previous.len(), "byte"),
                plural(count_lines(&previous_text), "line")
            )
        }
        None if created_directories => {
            format!("Created `{shown}` ({size}), with its parent directories.")
        }
        None => format!("Created `{shown}` ({size})."),
    };
    let text = match namesakes.as_slice() {
        [] => text,
        found => format!(
            "{text} It is a new file; files with the same name already exist: {}. If one of those was meant, write that path instead (and remove `{shown}` if it is not wanted).",
            found
                .iter()
                .map(|path| format!("`{path}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    ToolOutcome::success(text).with_changed_file(resolved)
}

/// Files with the same name shown at most after creating a file.
const NAMESAKES_SHOWN: usize = 5;

/// Creates the parent directory of `path` if missing; whether it had to.
fn create_parent(path: &Path) -> std::io::Result<bool> {
    match path.parent() {
        Some(parent) if !parent.is_dir() => fs::create_dir_all(parent).map(|()| true),
        _ => Ok(false),
    }
}
