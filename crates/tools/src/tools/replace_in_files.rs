//! `replace_in_files`: one text replaced by another in every text file under a path,
//! in one call — a rename or a changed URL across a project is one step, not one edit
//! a file that a small model loses count of. By default a match glued to letters,
//! digits or `_` on a side where the text itself starts or ends with one is left alone,
//! so `parse` does not change `parse_all`. The result lists every file changed with the
//! lines as they now read.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use serde_json::{json, Value};

use super::binary::looks_binary;
use super::spec::function_spec;
use crate::args::{optional_string, required_string, ArgError};
use crate::atomic_write::write_atomically;
use crate::outcome::{Access, ToolOutcome};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Replaces a text in every text file under a path.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReplaceInFiles;

const NAME: &str = "replace_in_files";
/// Files visited at most.
const MAX_FILES: usize = 5000;
/// Files larger than this are left alone.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Changed lines shown per file at most.
const SHOWN_LINES: usize = 3;

impl Tool for ReplaceInFiles {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Replace every occurrence of a text with another in all text files under a path (a rename, a changed URL, address or version across the project), in one call. A match inside a longer name is left alone unless whole_word is false.",
            json!({
                "type": "object",
                "properties": {
                    "old": {"type": "string", "description": "The exact text to replace."},
                    "new": {"type": "string", "description": "The text to put in its place."},
                    "path": {"type": "string", "description": "A directory (every file under it) or one file, relative to the workspace root (default: the root)."},
                    "whole_word": {"type": "boolean", "description": "Leave matches that are part of a longer name alone (default: true)."}
                },
                "required": ["old", "new"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Barrier
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match Replacement::from_args(args) {
            Ok(replacement) => replace(workspace, &replacement),
            Err(error) => error.into_outcome(NAME),
        }
    }

    fn is_source_edit(&self) -> bool {
        true
    }
}

/// A call's arguments, read.
struct Replacement<'a> {
    old: &'a str,
    new: &'a str,
    path: &'a str,
    whole_word: bool,
}

impl<'a> Replacement<'a> {
    fn from_args(args: &'a Value) -> Result<Self, ArgError> {
        let whole_word = match args.get("whole_word") {
            Some(Value::Bool(flag)) => *flag,
            Some(Value::String(text)) => !matches!(text.as_str(), "false" | "no" | "0"),
            _ => true,
        };
        Ok(Self {
            old: required_string(args, "old")?,
            new: required_string(args, "new")?,
            path: optional_string(args, "path")?.unwrap_or("."),
            whole_word,
        })
    }
}

fn replace(workspace: &Workspace, replacement: &Replacement<'_>) -> ToolOutcome {
    if replacement.old.is_empty() {
        return ToolOutcome::failure(format!(
            "{NAME}: `old` is empty. Call {NAME} again with the text to replace."
        ));
    }
    if replacement.old == replacement.new {
        return ToolOutcome::failure(format!(
            "{NAME}: `old` and `new` are the same text, so nothing would change. Put the changed text in `new`."
        ));
    }
    let root = match workspace.resolve(replacement.path) {
        Ok(root) => root,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    if !root.exists() {
        return ToolOutcome::failure(format!(
            "`{}` does not exist. Use list_dir to see what is there.",
            replacement.path
        ));
    }
    let mut changed: Vec<(PathBuf, usize, Vec<String>)> = Vec::new();
    let mut glued = 0usize;
    let mut failed: Vec<String> = Vec::new();
    for file in text_files(&root) {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if looks_binary(&bytes[..bytes.len().min(8192)], bytes.len() > 8192) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let (result, count, skipped) = replaced(&text, replacement);
        glued += skipped;
        if count == 0 {
            continue;
        }
        match write_atomically(&file, result.as_bytes()) {
            Ok(()) => {
                let lines = changed_lines(&result, replacement.new);
                changed.push((file, count, lines));
            }
            Err(error) => failed.push(format!("{}: {error}", workspace.relative(&file))),
        }
    }
    report(workspace, replacement, &changed, glued, &failed)
}

/// The text files under `root` (or `root` itself), hidden ones included, `.git` and
/// what `.gitignore` excludes left out, in name order.
fn text_files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut builder = WalkBuilder::new(root);
    builder
        .require_git(false)
        .hidden(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    builder
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES))
        .map(|entry| entry.into_path())
        .take(MAX_FILES)
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with the replacement made; how many were made, and how many matches were
/// left alone as part of a longer name.
fn replaced(text: &str, replacement: &Replacement<'_>) -> (String, usize, usize) {
    let old = replacement.old;
    let starts_word = old.chars().next().is_some_and(is_word_char);
    let ends_word = old.chars().last().is_some_and(is_word_char);
    let mut out = String::with_capacity(text.len());
    let (mut count, mut skipped, mut at) = (0, 0, 0);
    while let Some(found) = text[at..].find(old) {
        let start = at + found;
        let end = start + old.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        let glued = replacement.whole_word
            && ((starts_word && before.is_some_and(is_word_char))
                || (ends_word && after.is_some_and(is_word_char)));
        out.push_str(&text[at..start]);
        if glued {
            out.push_str(old);
            skipped += 1;
        } else {
            out.push_str(replacement.new);
            count += 1;
        }
        at = end;
    }
    out.push_str(&text[at..]);
    (out, count, skipped)
}

/// The lines of `text` that now hold `new`, numbered, a few at most.
fn changed_lines(text: &str, new: &str) -> Vec<String> {
    let first = new.lines().next().unwrap_or(new);
    text.lines()
        .enumerate()
        .filter(|(_, line)| !first.is_empty() && line.contains(first))
        .take(SHOWN_LINES)
        .map(|(index, line)| format!("{:>5}| {}", index + 1, line.trim_end()))
        .collect()
}

fn report(
    workspace: &Workspace,
    replacement: &Replacement<'_>,
    changed: &[(PathBuf, usize, Vec<String>)],
    glued: usize,
    failed: &[String],
) -> ToolOutcome {
    let total: usize = changed.iter().map(|(_, count, _)| count).sum();
    let mut text = match changed.len() {
        0 => format!(
            "No occurrence of `{}` to replace under `{}`.",
            replacement.old, replacement.path
        ),
        files => format!(
            "Replaced {total} occurrence{} of `{}` with `{}` in {files} file{}:",
            if total == 1 { "" } else { "s" },
            replacement.old,
            replacement.new,
            if files == 1 { "" } else { "s" }
        ),
    };
    for (file, count, lines) in changed {
        text.push_str(&format!("\n{} ({count}):", workspace.relative(file)));
        for line in lines {
            text.push('\n');
            text.push_str(line);
        }
    }
    if glued > 0 {
        text.push_str(&format!(
            "\n{glued} match{} inside a longer name left alone (whole_word=false replaces those too).",
            if glued == 1 { "" } else { "es" }
        ));
    }
    if !failed.is_empty() {
        text.push_str(&format!("\nNot written: {}", failed.join("; ")));
    }
    let mut outcome = match (changed.is_empty(), failed.is_empty()) {
        (true, true) => ToolOutcome::success(text).nothing_found(),
        (_, true) => ToolOutcome::success(text),
        (_, false) => ToolOutcome::failure(text),
    };
    for (file, _, _) in changed {
        outcome = outcome.with_changed_file(file.clone());
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_files::workspace;

    #[test]
    fn a_rename_changes_every_file_and_leaves_longer_names_alone() {
        let (dir, ws) = workspace(&[
            (
                "src/a.go",
                "func scheduleAccount() {}\nfunc scheduleAccountBatch() { scheduleAccount() }\n",
            ),
            ("jobs.go", "x := scheduleAccount()\n"),
            ("notes.txt", "nothing here\n"),
        ]);
        let out = ReplaceInFiles.call(
            &json!({"old": "scheduleAccount", "new": "resolveAccount"}),
            &ws,
        );
        assert!(out.ok, "{}", out.text);
        let a = std::fs::read_to_string(dir.path().join("src/a.go")).unwrap();
        assert_eq!(
            a,
            "func resolveAccount() {}\nfunc scheduleAccountBatch() { resolveAccount() }\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("jobs.go")).unwrap(),
            "x := resolveAccount()\n"
        );
        assert!(
            out.text.starts_with(
                "Replaced 3 occurrences of `scheduleAccount` with `resolveAccount` in 2 files:"
            ),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("1 match inside a longer name left alone"),
            "{}",
            out.text
        );
        assert_eq!(out.changed_files.len(), 2);
    }

    #[test]
    fn hidden_files_are_changed_and_git_is_not() {
        let (dir, ws) = workspace(&[
            (".env.example", "API=https://api.x.org\n"),
            (".git/config", "url = https://api.x.org\n"),
            ("README.md", "see https://api.x.org/docs\n"),
        ]);
        let out = ReplaceInFiles.call(
            &json!({"old": "https://api.x.org", "new": "https://cdn.x.org"}),
            &ws,
        );
        assert!(out.ok, "{}", out.text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".env.example")).unwrap(),
            "API=https://cdn.x.org\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
            "see https://cdn.x.org/docs\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".git/config")).unwrap(),
            "url = https://api.x.org\n"
        );
    }

    #[test]
    fn nothing_to_replace_is_said_and_changes_nothing() {
        let (_dir, ws) = workspace(&[("a.txt", "alpha\n")]);
        let out = ReplaceInFiles.call(&json!({"old": "beta", "new": "gamma"}), &ws);
        assert!(out.ok && out.found_nothing, "{}", out.text);
        assert!(out.text.contains("No occurrence of `beta`"), "{}", out.text);
        let out = ReplaceInFiles.call(&json!({"old": "alpha", "new": "alpha"}), &ws);
        assert!(!out.ok, "{}", out.text);
        let out = ReplaceInFiles.call(&json!({"old": "alpha", "new": "b", "path": "missing"}), &ws);
        assert!(
            !out.ok && out.text.contains("does not exist"),
            "{}",
            out.text
        );
    }

    #[test]
    fn whole_word_off_replaces_inside_longer_names_too() {
        let (dir, ws) = workspace(&[("a.py", "parse(x)\nparse_all(y)\n")]);
        let out = ReplaceInFiles.call(
            &json!({"old": "parse", "new": "read", "whole_word": false}),
            &ws,
        );
        assert!(out.ok, "{}", out.text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
            "read(x)\nread_all(y)\n"
        );
    }
}
