//! `edit_file`: replace exactly one occurrence of a string, atomically.

use std::io::Read;

use serde_json::{json, Value};

use super::edit_hints::{ambiguity_reply, not_found_reply};
use super::open_regular::{open_regular, OpenRefusal};
use super::spec::function_spec;
use crate::args::{required_string, write_access};
use crate::atomic_write::write_atomically;
use crate::outcome::{Access, ToolOutcome};
use crate::similar_files::did_you_mean;
use crate::text::{count_lines, line_number_at, plural, prefix_chars};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Replaces exactly one occurrence of `old_string` with `new_string` in a file.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditFile;

const NAME: &str = "edit_file";
/// Lines of the edited region shown in the reply.
const SHOWN_LINES: usize = 8;

impl Tool for EditFile {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Replace exactly one occurrence of old_string with new_string in a file. old_string must match the file exactly, including indentation; include enough surrounding lines to make it unique. To create a file, use write_file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the workspace root."},
                    "old_string": {"type": "string", "description": "The exact text to replace; it must occur once."},
                    "new_string": {"type": "string", "description": "The text to put in its place."}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        write_access(args, workspace)
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        let parsed = required_string(args, "path").and_then(|path| {
            Ok((
                path,
                required_string(args, "old_string")?,
                required_string(args, "new_string")?,
            ))
        });
        match parsed {
            Ok((path, old, new)) => edit(workspace, path, old, new),
            Err(error) => error.into_outcome(NAME),
        }
    }

    fn is_source_edit(&self) -> bool {
        true
    }
}

fn edit(workspace: &Workspace, path: &str, old: &str, new: &str) -> ToolOutcome {
    if old.is_empty() {
        return ToolOutcome::failure(
            "old_string is empty, so there is nothing to find. To create a file or replace all of it, use write_file; to insert text, put the neighbouring line in old_string and that line plus the new text in new_string.",
        );
    }
    let resolved = match workspace.resolve(path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let shown = workspace.relative(&resolved);
    let mut file = match open_regular(&resolved, &shown) {
        Ok((file, _)) => file,
        Err(OpenRefusal::Missing) => {
            return ToolOutcome::failure(match did_you_mean(workspace, &resolved) {
                None => format!(
                    "`{shown}` does not exist. To create it, use write_file; to find the file, use search with mode=\"files\"."
                ),
                Some(listed) => format!(
                    "`{shown}` does not exist; did you mean {listed}? Edit the file that exists (to create a new one, use write_file)."
                ),
            });
        }
        Err(OpenRefusal::NotRegular(refusal)) => return ToolOutcome::failure(refusal),
        Err(OpenRefusal::Io(error)) => {
            return ToolOutcome::failure(format!("cannot read `{shown}`: {error}."))
        }
    };
    let mut bytes = Vec::new();
    if let Err(error) = file.read_to_end(&mut bytes) {
        return ToolOutcome::failure(format!("cannot read `{shown}`: {error}."));
    }
    let Ok(content) = String::from_utf8(bytes) else {
        return ToolOutcome::failure(format!(
            "`{shown}` is not valid UTF-8 text, so it cannot be edited as text; use write_file to replace it, or shell."
        ));
    };
    let starts = occurrences(&content, old);
    // An old_string the file does not have is the more useful news (what the file has
    // instead); identical strings are refused only once they are found.
    if old == new && !starts.is_empty() {
        return ToolOutcome::failure("old_string and new_string are identical, so the edit would change nothing. Put the changed text in new_string.");
    }
    if let Some(lines) = already_applied(&content, &starts, old, new) {
        // `calc` → `calculate_total` in a file that has `calculate_total` already:
        // replacing would write `calculate_totalulate_total`.
        return ToolOutcome::success(format!(
            "No change needed: the edit looks applied already. Every place old_string occurs in `{shown}` (line {lines}) is inside new_string, which is there already. Read the file to confirm; do not edit it again."
        ));
    }
    match starts.as_slice() {
        [] => match content.find(new) {
            Some(start) => ToolOutcome::success(applied_or_reversed(&content, start, &shown)),
            None => ToolOutcome::failure(not_found_reply(&content, old, &shown)),
        },
        [start] => replace(&resolved, &shown, &content, *start, old, new),
        several => ToolOutcome::failure(ambiguity_reply(&content, several, old, &shown)),
    }
}

/// The reply when old_string is missing and new_string is there at `start`: applied
/// by an earlier call, or (when nothing changed the file) old and new swapped, as a
/// small model writes them for "assert 0.1 == 0.15" — the line is shown either way.
fn applied_or_reversed(content: &str, start: usize, shown: &str) -> String {
    let number = line_number_at(content, start);
    let line = prefix_chars(
        content.lines().nth(number - 1).unwrap_or_default().trim(),
        200,
    );
    format!(
        "No change needed: the edit is already applied (line {number}); old_string is not in `{shown}` but new_string is. Line {number} reads: `{line}`. If no earlier call of yours made this change, old_string and new_string are the wrong way round: old_string is the text the file has now, new_string the text it should get."
    )
}

/// The lines (`1, 6`) when every occurrence of `old` at `starts` lies inside an
/// occurrence of `new` (which contains `old`): the edit was made before.
fn already_applied(content: &str, starts: &[usize], old: &str, new: &str) -> Option<String> {
    if starts.is_empty() || !new.contains(old) || new == old {
        return None;
    }
    let news = occurrences(content, new);
    let inside = |start: usize| {
        news.iter()
            .any(|&at| at <= start && start + old.len() <= at + new.len())
    };
    if !starts.iter().all(|&start| inside(start)) {
        return None;
    }
    let mut lines: Vec<String> = starts
        .iter()
        .map(|&start| line_number_at(content, start).to_string())
        .collect();
    lines.dedup();
    Some(lines.join(", "))
}

/// Byte offsets of every occurrence of `needle`, overlapping ones included.
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(found) = haystack[from..].find(needle) {
        let start = from + found;
        starts.push(start);
        let step = haystack[start..].chars().next().map_or(1, char::len_utf8);
        from = start + step;
    }
    starts
}

fn replace(
    resolved: &std::path::Path,
    shown: &str,
    content: &str,
    start: usize,
    old: &str,
    new: &str,
) -> ToolOutcome {
    let edited = format!(
        "{}{new}{}",
        &content[..start],
        &content[start + old.len()..]
    );
    if let Err(error) = write_atomically(resolved, edited.as_bytes()) {
        return ToolOutcome::failure(format!("cannot write `{shown}`: {error}."));
    }
    let line = line_number_at(content, start);
    let new_lines = count_lines(new).max(1);
    let mut text = format!(
        "Edited `{shown}` at line {line}: replaced {} with {}; the file now has {} lines.\n",
        plural(count_lines(old).max(1), "line"),
        plural(new_lines, "line"),
        count_lines(&edited)
    );
    let width = (line + new_lines).to_string().len().max(4);
    for (index, text_line) in edited
        .lines()
        .skip(line - 1)
        .take(new_lines.min(SHOWN_LINES))
        .enumerate()
    {
        let shown_line = prefix_chars(text_line.trim_end(), 200);
        text.push_str(&format!("{:>width$}| {shown_line}\n", line + index));
    }
    ToolOutcome::success(text.trim_end().to_string()).with_changed_file(resolved.to_path_buf())
}
