//! `read_file`: a numbered window of a text file, with the exact call to continue.

use std::io::{BufReader, Cursor, Read};
use std::path::Path;

use serde_json::{json, Value};

use super::binary::{looks_binary, SAMPLE_BYTES};
use super::list_dir::list_existing;
use super::open_regular::{open_regular, OpenRefusal};
use super::read_window::{read_window, Window, WindowError, WindowRequest};
use super::spec::function_spec;
use crate::args::{optional_usize, read_access, required_string, ArgError};
use crate::outcome::{Access, ToolOutcome};
use crate::read_memory::{FileStamp, ReadRequest};
use crate::similar_files::did_you_mean;
use crate::text::json_string;
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Reads a window of a text file, numbered, under the workspace's line and
/// character budgets.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadFile;

const NAME: &str = "read_file";

impl Tool for ReadFile {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Read a text file; each line is shown with its number. A long file is shown in windows, and the reply says how to continue. Use list_dir for directories.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the workspace root."},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based (default 1)."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show."},
                    "char_offset": {"type": "integer", "minimum": 0, "description": "Characters of the first line to skip, to continue a very long line."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        read_access(args, workspace, None)
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match parse(args, workspace) {
            Ok((path, request)) => {
                with_data_hint(workspace, path, read(workspace, path, request, true))
            }
            Err(error) => error.into_outcome(NAME),
        }
    }
}

fn parse<'a>(args: &'a Value, workspace: &Workspace) -> Result<(&'a str, WindowRequest), ArgError> {
    let path = required_string(args, "path")?;
    let offset = optional_usize(args, "offset")?.unwrap_or(1).max(1);
    let limit = optional_usize(args, "limit")?
        .filter(|&limit| limit > 0)
        .unwrap_or(workspace.limits().read_lines)
        .max(1);
    let char_offset = optional_usize(args, "char_offset")?.unwrap_or(0);
    let request = WindowRequest {
        offset,
        char_offset,
        limit,
        char_budget: workspace.limits().read_chars,
    };
    Ok((path, request))
}

/// A successful read of a data file ends with what the file holds (see
/// [`ToolLimits::data_hint`](crate::ToolLimits::data_hint)).
fn with_data_hint(workspace: &Workspace, path: &str, mut outcome: ToolOutcome) -> ToolOutcome {
    if !outcome.ok || !workspace.limits().data_hint {
        return outcome;
    }
    let Ok(resolved) = workspace.resolve(path) else {
        return outcome;
    };
    if let Some(hint) = super::records::data_hint(&resolved, &workspace.relative(&resolved)) {
        outcome.text = format!("{}\n{hint}", outcome.text);
    }
    outcome
}

/// The first page of `path` as a read shows it, outside the run's memory of reads (a
/// `list_dir` of a file shows it; a later read shows it again).
pub(crate) fn first_page(workspace: &Workspace, path: &str) -> ToolOutcome {
    let request = WindowRequest {
        offset: 1,
        char_offset: 0,
        limit: workspace.limits().read_lines.max(1),
        char_budget: workspace.limits().read_chars,
    };
    read(workspace, path, request, false)
}

/// `request` of `path`; with `remembered`, a range read before and unchanged since
/// is not shown again.
fn read(
    workspace: &Workspace,
    path: &str,
    request: WindowRequest,
    remembered: bool,
) -> ToolOutcome {
    let resolved = match workspace.resolve(path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let shown = workspace.relative(&resolved);
    // A directory read as a file: its entries are what the look was for.
    if resolved.is_dir() {
        let listing = list_existing(workspace, &resolved, &shown);
        return match listing.ok {
            true => ToolOutcome::success(format!(
                "`{shown}` is a directory, not a file; its entries, as list_dir shows them:\n{}",
                listing.text
            )),
            false => listing,
        };
    }
    let (file, metadata) = match open_regular(&resolved, &shown) {
        Ok(opened) => opened,
        Err(OpenRefusal::Missing) => {
            return ToolOutcome::failure(missing_reply(workspace, &resolved, &shown))
        }
        Err(OpenRefusal::NotRegular(refusal)) => return ToolOutcome::failure(refusal),
        Err(OpenRefusal::Io(error)) => {
            return ToolOutcome::failure(format!("cannot read `{shown}`: {error}."))
        }
    };
    if metadata.len() == 0 {
        return ToolOutcome::success(format!("`{shown}` is empty (0 bytes)."));
    }
    let stamp = FileStamp::of(&metadata);
    let memory_key = ReadRequest {
        path: resolved.clone(),
        offset: request.offset,
        limit: request.limit,
        char_offset: request.char_offset,
    };
    let recalled = remembered
        .then(|| {
            workspace
                .with_state(|state| state.reads.recall(&memory_key, &stamp).map(str::to_string))
        })
        .flatten();
    if let Some(range) = recalled {
        return ToolOutcome::success(format!(
            "You already read {range} of `{shown}` and it has not changed since; use what you read, or read another range."
        ));
    }
    let mut sample = Vec::with_capacity(SAMPLE_BYTES);
    let mut file = file;
    if let Err(error) = (&mut file)
        .take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)
    {
        return ToolOutcome::failure(format!("cannot read `{shown}`: {error}."));
    }
    if looks_binary(&sample, metadata.len() > sample.len() as u64) {
        return ToolOutcome::failure(format!(
            "`{shown}` is a binary file ({} bytes); use shell (e.g. `xxd {shown} | head` or `file {shown}`) instead.",
            metadata.len()
        ));
    }
    let reader = BufReader::new(Cursor::new(sample).chain(file));
    match read_window(reader, request) {
        Ok(window) => {
            let (text, range) = render(&window, &shown, request);
            if remembered {
                workspace.with_state(|state| state.reads.remember(memory_key, stamp, range));
            }
            ToolOutcome::success(text)
        }
        Err(WindowError::OffsetPastEnd { total_lines }) => ToolOutcome::failure(format!(
            "`{shown}` has {total_lines} lines; offset {} is past the end. Read from an offset between 1 and {total_lines}.",
            request.offset
        )),
        Err(WindowError::CharOffsetPastEnd { line_chars }) => ToolOutcome::failure(format!(
            "line {} of `{shown}` has {line_chars} characters; char_offset {} is past its end. Use a smaller char_offset or read from offset={}.",
            request.offset,
            request.char_offset,
            request.offset + 1
        )),
        Err(WindowError::Io(error)) => ToolOutcome::failure(format!("cannot read `{shown}`: {error}.")),
    }
}

/// The numbered lines and a footer saying how to continue, and a description of the
/// range shown (`lines 1-200`) for the re-read memory.
fn render(window: &Window, shown: &str, request: WindowRequest) -> (String, String) {
    let first = window
        .lines
        .first()
        .map_or(request.offset, |(number, _)| *number);
    let last = window.lines.last().map_or(first, |(number, _)| *number);
    let width = last.to_string().len().max(4);
    let mut text = String::new();
    for (index, (number, line)) in window.lines.iter().enumerate() {
        let resumed = if index == 0 && request.char_offset > 0 {
            "…"
        } else {
            ""
        };
        let cut = if window.cut.is_some() && index + 1 == window.lines.len() {
            "…"
        } else {
            ""
        };
        text.push_str(&format!("{number:>width$}| {resumed}{line}{cut}\n"));
    }
    let quoted = json_string(shown);
    let lines_shown = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    let total = window.total_lines;
    let (range, footer) = match window.cut {
        Some(cut) => {
            let range = format!(
                "line {first}, characters {}-{} of {}",
                request.char_offset, cut.resume_at, cut.line_chars
            );
            let footer = format!(
                "[{range} shown; continue with read_file(path={quoted}, offset={first}, char_offset={})]",
                cut.resume_at
            );
            (range, Some(footer))
        }
        None => {
            let range = match request.char_offset {
                0 => lines_shown,
                start => format!("{lines_shown} (line {first} from character {start})"),
            };
            let footer = if last < total {
                Some(format!(
                    "[{range} of {total} shown; continue with read_file(path={quoted}, offset={})]",
                    last + 1
                ))
            } else if first > 1 || request.char_offset > 0 {
                Some(format!("[{range} of {total} shown; end of file]"))
            } else {
                None
            };
            (range, footer)
        }
    };
    if let Some(footer) = footer {
        text.push_str(&footer);
    }
    (text, range)
}

fn missing_reply(workspace: &Workspace, resolved: &Path, shown: &str) -> String {
    match did_you_mean(workspace, resolved) {
        None => format!(
            "`{shown}` does not exist. Use list_dir to see what is there, or search with mode=\"files\" to find the file."
        ),
        Some(listed) => format!("`{shown}` does not exist; did you mean {listed}?"),
    }
}
