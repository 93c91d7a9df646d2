//! `list_dir`: a directory's entries, sorted, with kinds and sizes.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use super::read_file::first_page;
use super::spec::function_spec;
use crate::args::{optional_string, read_access};
use crate::file_kind::FileKind;
use crate::outcome::{Access, ToolOutcome};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Lists a directory: entries sorted by name, directories with a trailing `/`,
/// file sizes, hidden entries marked, symbolic links with their targets.
#[derive(Debug, Default, Clone, Copy)]
pub struct ListDir;

const NAME: &str = "list_dir";
/// A file listed by mistake is shown whole up to this size.
const SHOWN_FILE_BYTES: u64 = 4096;

impl Tool for ListDir {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "List the entries of a directory with file sizes; directories end with `/`. Use read_file to read a file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory, relative to the workspace root (default: the root)."}
                },
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        read_access(args, workspace, Some("."))
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match optional_string(args, "path") {
            Ok(path) => list(workspace, path.unwrap_or(".")),
            Err(error) => error.into_outcome(NAME),
        }
    }
}

struct Entry {
    name: String,
    line: String,
}

fn list(workspace: &Workspace, path: &str) -> ToolOutcome {
    let resolved = match workspace.resolve(path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let shown = workspace.relative(&resolved);
    let metadata = match fs::metadata(&resolved) {
        Ok(metadata) => metadata,
        Err(_) => {
            // The next look is the closest directory that exists: it is listed here,
            // so the reply names what is there instead of only what is not.
            let nearest = workspace.nearest_directory(&resolved);
            let listing = list_existing(workspace, &nearest, &workspace.relative(&nearest));
            return ToolOutcome::failure(format!(
                "`{shown}` does not exist. The nearest directory that does:\n{}",
                listing.text
            ));
        }
    };
    let kind = FileKind::of(&metadata.file_type());
    if kind == FileKind::Regular {
        return regular_file(workspace, path, &shown, metadata.len());
    }
    if kind != FileKind::Directory {
        return ToolOutcome::failure(format!(
            "`{shown}` is a {}, not a directory; use read_file to read a file, or list its parent directory.",
            kind.noun()
        ));
    }
    list_existing(workspace, &resolved, &shown)
}

/// A regular file listed as a directory: what a look at it was for, as `ls -l` of a
/// file answers. Its size (in bytes too past 1 KiB), and when it is short text, what read_file shows of it; a
/// binary file's size in bytes (what a question about it most often asks).
fn regular_file(workspace: &Workspace, path: &str, shown: &str, bytes: u64) -> ToolOutcome {
    // The exact count too, once the short form rounds it ("How many bytes …").
    let size = match bytes < 1024 {
        true => human_size(bytes),
        false => format!("{bytes} bytes, {}", human_size(bytes)),
    };
    let lead = format!("`{shown}` is a file ({size}), not a directory");
    if bytes > SHOWN_FILE_BYTES {
        return ToolOutcome::success(format!(
            "{lead}; read it with read_file (a page at a time) or search it."
        ));
    }
    let read = first_page(workspace, path);
    match read.ok {
        true => ToolOutcome::success(format!(
            "{lead}. What read_file shows of it:\n{}",
            read.text
        )),
        false => ToolOutcome::success(format!("{lead}. {}", read.text)),
    }
}

/// The listing of `resolved`, a directory that exists.
pub(crate) fn list_existing(workspace: &Workspace, resolved: &Path, shown: &str) -> ToolOutcome {
    let reader = match fs::read_dir(resolved) {
        Ok(reader) => reader,
        Err(error) => return ToolOutcome::failure(format!("cannot list `{shown}`: {error}.")),
    };
    let mut entries: Vec<Entry> = reader
        .filter_map(Result::ok)
        .map(|entry| {
            describe(
                workspace,
                &entry.path(),
                entry.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    if entries.is_empty() {
        return ToolOutcome::success(format!("`{shown}` is empty."));
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let budget = workspace.limits().list_entries.max(1);
    let count = match entries.len() {
        1 => "1 entry".to_string(),
        many => format!("{many} entries"),
    };
    let mut text = format!("`{shown}` ({count}):\n");
    for entry in entries.iter().take(budget) {
        text.push_str(&entry.line);
        text.push('\n');
    }
    let rest = entries.len().saturating_sub(budget);
    if rest > 0 {
        text.push_str(&format!(
            "[{rest} more not shown; list a subdirectory, or use search with mode \"files\" to find a name]"
        ));
    }
    ToolOutcome::success(text.trim_end().to_string())
}

fn describe(workspace: &Workspace, path: &Path, name: String) -> Entry {
    let metadata = fs::symlink_metadata(path);
    let kind = metadata.as_ref().map_or(FileKind::Other, |metadata| {
        FileKind::of(&metadata.file_type())
    });
    let mut line = format!("  {name}");
    match kind {
        FileKind::Directory => line.push('/'),
        FileKind::Regular => {
            let size = metadata.as_ref().map_or(0, fs::Metadata::len);
            line.push_str(&format!("  {}", human_size(size)));
        }
        FileKind::Symlink => line.push_str(&link_description(workspace, path)),
        other => line.push_str(&format!("  ({})", other.noun())),
    }
    if name.starts_with('.') {
        line.push_str("  (hidden)");
    }
    Entry { name, line }
}

fn link_description(workspace: &Workspace, path: &Path) -> String {
    let target =
        fs::read_link(path).map_or_else(|_| "?".to_string(), |target| target.display().to_string());
    let note = match fs::canonicalize(path) {
        Err(_) => "  (broken link)",
        Ok(resolved) if !resolved.starts_with(workspace.root()) => "  (outside the workspace)",
        Ok(resolved) if resolved.is_dir() => "  (directory)",
        Ok(_) => "",
    };
    format!(" -> {target}{note}")
}

/// A byte count for people: `812 B`, `1.2 KiB`, `3.4 MiB`.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }
}
