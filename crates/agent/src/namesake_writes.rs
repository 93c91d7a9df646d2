//! A new file beside the files the task means (`full`): in a task that asks to change
//! what exists ("Every service under services/ has a VERSION file. Set the version of
//! each one to 1.1.0."), a `write_file` that would create `services/VERSION` while
//! `services/auth/VERSION` and its namesakes exist below it is not run, once (the same
//! write again is run: a new file may be what was meant). Its result lists the
//! namesakes; when they are short and alike, it shows their content and the write of
//! the new content to each, so the writes the task means can be copied — the default
//! model created the one new file and answered, in every repetition of `traps`.

use std::path::{Path, PathBuf};

use rein_tools::Workspace;
use serde_json::{json, Value};

use crate::run::WRITE_TOOL;
use crate::validate::ReadyCall;

/// Namesakes shown (and offered a write) at most.
const MAX_NAMESAKES: usize = 6;
/// A namesake's content is shown when it is at most this long.
const MAX_SHOWN_BYTES: u64 = 400;
/// Directories deep below the new file's directory that are looked in.
const MAX_DEPTH: usize = 4;
/// Directory entries looked at, at most.
const MAX_ENTRIES: usize = 4000;

/// Why `call` is not run, and the namesakes whose content its note shows (the run has
/// seen them), when it writes a new file whose name files below its directory have.
/// `write_call` writes a call in the model's syntax.
pub(crate) fn namesake_write_note(
    call: &ReadyCall,
    workspace: &Workspace,
    write_call: impl Fn(&Value) -> String,
) -> Option<Refusal> {
    if call.name != WRITE_TOOL {
        return None;
    }
    let path = call.arguments.get("path").and_then(Value::as_str)?;
    let content = call.arguments.get("content").and_then(Value::as_str)?;
    let resolved = workspace.resolve(path).ok()?;
    if resolved.exists() {
        return None;
    }
    let name = resolved.file_name()?.to_os_string();
    let parent = resolved.parent().filter(|p| p.is_dir())?;
    let mut found = Vec::new();
    let mut entries = 0;
    namesakes_below(parent, &name, 0, &mut entries, &mut found);
    // None, too many, or a walk cut short (the list would not be all of them).
    if found.is_empty() || found.len() > MAX_NAMESAKES || entries > MAX_ENTRIES {
        return None;
    }
    found.sort();
    let small = |file: &PathBuf| std::fs::metadata(file).is_ok_and(|m| m.len() <= MAX_SHOWN_BYTES);
    let texts: Vec<Option<String>> = found
        .iter()
        .map(|file| std::fs::read_to_string(file).ok().filter(|_| small(file)))
        .collect();
    // Alike: each short, and all with the same content (a version, a flag).
    let alike = texts.iter().all(Option::is_some) && texts.windows(2).all(|w| w[0] == w[1]);
    let mut note = format!(
        "Not run: `{path}` does not exist, and the task asks to change files that do. Files named `{}` below `{}`:\n",
        name.to_string_lossy(),
        workspace.relative(parent)
    );
    for (file, text) in found.iter().zip(&texts) {
        let relative = workspace.relative(file);
        match text.as_deref().filter(|_| alike) {
            Some(text) => note.push_str(&format!("`{relative}`: {}\n", text.trim_end())),
            None => note.push_str(&format!("`{relative}`\n")),
        }
    }
    match alike {
        true => {
            note.push_str("If the task means them, write each one instead:\n");
            for file in &found {
                let relative = workspace.relative(file);
                note.push_str(&write_call(&json!({"path": relative, "content": content})));
                note.push('\n');
            }
        }
        false => note.push_str(
            "If the task means them, change those instead (read each first). If a new file is what the task asks for, make the same call again.\n",
        ),
    }
    Some(Refusal {
        note: note.trim_end().to_string(),
        path: resolved,
        shown: if alike { found } else { Vec::new() },
    })
}

/// A write not run: its note, the file it would have created, and the namesakes the
/// note showed whole (the run has seen them).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The result given instead.
    pub note: String,
    /// The new file's path (resolved): the same write again is run.
    pub path: PathBuf,
    /// The namesakes shown whole.
    pub shown: Vec<PathBuf>,
}

/// Files named `name` below `dir` (not in it), depth first, within the bounds.
fn namesakes_below(
    dir: &Path,
    name: &std::ffi::OsStr,
    depth: usize,
    entries: &mut usize,
    found: &mut Vec<PathBuf>,
) {
    if depth > MAX_DEPTH || found.len() > MAX_NAMESAKES {
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if !hidden {
                namesakes_below(&path, name, depth + 1, entries, found);
            }
        } else if kind.is_file() && depth > 0 && entry.file_name() == name {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &str) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: WRITE_TOOL.into(),
            arguments: json!({"path": path, "content": "1.1.0"}),
        }
    }

    #[test]
    fn a_new_file_above_its_namesakes_is_refused_with_their_writes() {
        let dir = tempfile::tempdir().unwrap();
        for service in ["auth", "billing"] {
            let folder = dir.path().join("services").join(service);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("VERSION"), "1.0.3\n").unwrap();
        }
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let call_text = |arguments: &Value| format!("CALL {arguments}");
        let refusal =
            namesake_write_note(&write("services/VERSION"), &workspace, call_text).unwrap();
        assert_eq!(
            refusal.note,
            "Not run: `services/VERSION` does not exist, and the task asks to change files that do. Files named `VERSION` below `services`:\n\
             `services/auth/VERSION`: 1.0.3\n\
             `services/billing/VERSION`: 1.0.3\n\
             If the task means them, write each one instead:\n\
             CALL {\"path\":\"services/auth/VERSION\",\"content\":\"1.1.0\"}\n\
             CALL {\"path\":\"services/billing/VERSION\",\"content\":\"1.1.0\"}"
        );
        assert_eq!(refusal.shown.len(), 2);
        assert!(refusal.path.ends_with("services/VERSION"));
        // A file that exists, a name no file below has, a directory that does not
        // exist yet: written as asked.
        for path in ["services/auth/VERSION", "services/NOTES", "other/VERSION"] {
            assert_eq!(
                namesake_write_note(&write(path), &workspace, call_text),
                None
            );
        }
        // Namesakes that differ are listed, with no writes over them.
        std::fs::write(dir.path().join("services/billing/VERSION"), "2.0.0\n").unwrap();
        let refusal =
            namesake_write_note(&write("services/VERSION"), &workspace, call_text).unwrap();
        assert!(
            refusal.note.contains("`services/auth/VERSION`\n"),
            "{}",
            refusal.note
        );
        assert!(!refusal.note.contains("CALL"), "{}", refusal.note);
        assert!(refusal.shown.is_empty());
    }
}
