//! A `write_file` whose content is the request itself: the 1.5B model, asked to "Fix
//! the spelling mistake 'recieve' in docs/guide.md", wrote that sentence over the file.
//! Under `full` such a write to an existing file is not run; its result says what the
//! content must be instead. Nor is a call whose text carries the harness's own notes.

use std::path::Path;

use rein_protocol::Message;

use crate::tool_names::WRITE_TOOL;
use crate::validate::ReadyCall;

/// Shorter content may well be a line the request quotes.
const MIN_COPIED_CHARS: usize = 24;

/// The result given instead of running `call`, when one of its string arguments
/// carries a phrase of the loop's own notes ("You already made exactly this call"): a
/// small model copying the note it just read into a file or a command.
pub(crate) fn copied_note_note(call: &ReadyCall) -> Option<String> {
    let (key, phrase) = call
        .arguments
        .as_object()?
        .iter()
        .find_map(|(key, value)| {
            let text = value.as_str()?;
            let phrase = crate::recovery::NOTE_PHRASES
                .iter()
                .find(|phrase| text.contains(*phrase))?;
            Some((key, *phrase))
        })?;
    Some(format!(
        "Not run: `{key}` holds a note of the harness (\"{phrase}…\"), not text from the workspace. Give as `{key}` only what the task asks for, taken from the tool results."
    ))
}

/// The result given instead of running `call`, when it writes the first request's own
/// text (or a part of it) over a file that exists under `root`.
pub(crate) fn copied_request_note(
    call: &ReadyCall,
    history: &[Message],
    root: &Path,
) -> Option<String> {
    if call.name != WRITE_TOOL {
        return None;
    }
    let path = call.arguments.get("path")?.as_str()?;
    let content = call.arguments.get("content")?.as_str()?.trim();
    let request = crate::task_words::task_of(history).trim();
    let copied = content.chars().count() >= MIN_COPIED_CHARS && request.contains(content);
    let exists = root.join(path).is_file();
    (copied && exists).then(|| {
        format!(
            "Not run: this content is the request itself, not the new text of `{path}`, and writing it would replace the whole file. Read `{path}` first (read_file), then change the line that needs it with edit_file (old_string: the line as it is; new_string: the corrected line)."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &str, content: &str) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: WRITE_TOOL.into(),
            arguments: json!({"path": path, "content": content}),
        }
    }

    #[test]
    fn the_request_written_over_a_file_is_held_and_real_content_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/guide.md"), "To recieve updates.\n").unwrap();
        let task = "Fix the spelling mistake 'recieve' in docs/guide.md. Leave docs/archive/guide.md as it is.";
        let history = [Message::user(task)];
        let note = copied_request_note(&write("docs/guide.md", task), &history, dir.path());
        assert!(note.is_some_and(|n| n.contains("edit_file")));
        for call in [
            write("docs/guide.md", "To receive updates.\n"),
            // A new file may hold the request (notes, a TODO list).
            write("notes.md", task),
            // A short quoted line is real content.
            write("docs/guide.md", "recieve"),
        ] {
            assert_eq!(
                copied_request_note(&call, &history, dir.path()),
                None,
                "{call:?}"
            );
        }
    }
}
