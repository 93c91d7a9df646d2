//! What a failing command could not find: each workspace file or module its output says
//! does not exist (`cat: pages/x.txt: No such file or directory`, Python's
//! `FileNotFoundError` and `No module named 'x'`, Node's `Cannot find module './x'`
//! and `ENOENT`, `cannot create out/x: Directory nonexistent`), the workspace files whose
//! names are closest to it, and the workspace lines that write the missing name — a
//! misspelled name and where it is written, shown with the failure instead of left to
//! several more calls. The shapes read are the operating system's and the runtimes' own
//! error messages, not any task's words.

use std::path::{Path, PathBuf};

use regex::Regex;

use super::workspace_files::files_under;
use crate::similar_files::similar_files;
use crate::workspace::Workspace;

/// Missing names looked at, at most.
const NAMES: usize = 3;
/// Similar files shown per missing name, at most.
const SIMILAR: usize = 3;
/// Lines naming the missing name shown, at most.
const WRITTEN_AT: usize = 3;
/// Characters of one such line shown.
const LINE_CHARS: usize = 160;
/// Files looked through for lines naming it, at most.
const VISITED_FILES: usize = 2_000;
/// Files larger than this are not looked through.
const MAX_BYTES: u64 = 256 * 1024;

/// What the output says is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Missing {
    /// A file or directory path, as written in the output.
    Path(String),
    /// A directory that a path's parent should have been (`Directory nonexistent`).
    Directory(String),
    /// A Python module (`a.b`) or a Node module path (`./lib/x`), as written.
    Module {
        name: String,
        extensions: &'static [&'static str],
    },
}

/// The notes a failing command's result ends with, one per missing workspace name:
/// its closest existing files and the lines that write it. Empty when the output
/// names nothing missing inside the workspace.
pub(crate) fn missing_paths(workspace: &Workspace, cwd: &Path, output: &str) -> String {
    let mut out = String::new();
    for missing in missing_names(output).into_iter().take(NAMES) {
        if let Some(note) = note(workspace, cwd, &missing) {
            out.push_str("\nnote: ");
            out.push_str(&note);
        }
    }
    out
}

/// An error message's shape: the pattern whose first group is the name, and what the
/// name is.
type Shape = (&'static str, fn(String) -> Missing);

/// The names `output` reports missing, in order, without repeats.
fn missing_names(output: &str) -> Vec<Missing> {
    const PY: &[&str] = &["py"];
    const JS: &[&str] = &["js", "mjs", "cjs", "ts", "json"];
    let shapes: [Shape; 7] = [
        // Python's FileNotFoundError / open() and `python3 x.py` of a missing file.
        (r"No such file or directory: '([^']+)'", Missing::Path),
        (r"can't open file '([^']+)'", Missing::Path),
        // Node's ENOENT.
        (
            r"ENOENT: no such file or directory, \w+ '([^']+)'",
            Missing::Path,
        ),
        // sh, cat, cp and most tools: `tool: PATH: No such file or directory`, and
        // dash's `sh: 1: cannot open PATH: No such file`.
        (
            r"(?m)(?:^|: )(?:cannot open |can't open |cannot access ')?([^\s:'`]+)'?: No such file",
            Missing::Path,
        ),
        (r"cannot create ([^\s:]+): Directory nonexistent", |p| {
            Missing::Directory(p)
        }),
        (r"No module named '([A-Za-z0-9_.]+)'", |name| {
            Missing::Module {
                name,
                extensions: PY,
            }
        }),
        (r"Cannot find module '([^']+)'", |name| Missing::Module {
            name,
            extensions: JS,
        }),
    ];
    let mut found: Vec<(usize, Missing)> = Vec::new();
    for (pattern, make) in shapes {
        let Ok(regex) = Regex::new(pattern) else {
            continue;
        };
        for caps in regex.captures_iter(output) {
            let (Some(all), Some(name)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let missing = make(name.as_str().to_string());
            if !found.iter().any(|(_, m)| *m == missing) {
                found.push((all.start(), missing));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, m)| m).collect()
}

/// The note for one missing name, or `None` when it is outside the workspace or
/// exists after all.
fn note(workspace: &Workspace, cwd: &Path, missing: &Missing) -> Option<String> {
    let root = workspace.root();
    match missing {
        Missing::Path(written) | Missing::Directory(written) => {
            let path = inside(root, cwd, written)?;
            let target = match missing {
                Missing::Directory(_) => path.parent()?.to_path_buf(),
                _ => path.clone(),
            };
            if target.exists() {
                return None;
            }
            let shown = workspace.relative(&target);
            let mut note = match missing {
                Missing::Directory(_) => format!("the directory `{shown}/` does not exist"),
                _ => format!("`{shown}` does not exist"),
            };
            let similar: Vec<String> = match missing {
                Missing::Directory(_) => Vec::new(),
                _ => similar_files(workspace, &target, SIMILAR),
            };
            if !similar.is_empty() {
                note.push_str(&format!("; closest files: {}", ticked(&similar)));
            }
            let needle = match missing {
                Missing::Directory(_) => shown.rsplit('/').next().unwrap_or(&shown).to_string(),
                _ => file_name(written),
            };
            note.push_str(&written_at(workspace, &needle, false));
            Some(format!("{note}."))
        }
        Missing::Module { name, extensions } => {
            let relative = name.starts_with("./") || name.starts_with("../");
            let bare = name.trim_start_matches("./").trim_start_matches("../");
            let (stem, as_path) = match extensions.first() {
                Some(&"py") => (
                    bare.rsplit('.').next().unwrap_or(bare).to_string(),
                    bare.replace('.', "/"),
                ),
                _ => (file_name(bare), bare.to_string()),
            };
            if !relative && extensions.first() != Some(&"py") {
                // A package name (`express`): not a workspace file.
                return None;
            }
            let mut similar: Vec<String> = Vec::new();
            for extension in extensions.iter() {
                let wanted = root.join(format!("{as_path}.{extension}"));
                for found in similar_files(workspace, &wanted, SIMILAR) {
                    if !similar.contains(&found) && similar.len() < SIMILAR {
                        similar.push(found);
                    }
                }
            }
            // A module found by its exact name is not missing from the workspace: the
            // failure is about where it is looked for, which these lines do not decide.
            if similar.iter().any(|s| file_stem(s) == stem) {
                return None;
            }
            let mut note = format!("no module `{name}` is in the workspace");
            if !similar.is_empty() {
                note.push_str(&format!("; closest files: {}", ticked(&similar)));
            }
            note.push_str(&written_at(workspace, &stem, true));
            Some(format!("{note}."))
        }
    }
}

/// `written` as an absolute path inside the workspace (relative to the command's
/// directory, or absolute under the root); `None` outside it.
fn inside(root: &Path, cwd: &Path, written: &str) -> Option<PathBuf> {
    let path = Path::new(written);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut normal = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    (normal.starts_with(root) && normal != root).then_some(normal)
}

/// "; it is written at `a.sh:3`: cat x" for the first lines of the workspace holding
/// `needle` (as a whole word when `word`), or nothing when none does.
fn written_at(workspace: &Workspace, needle: &str, word: bool) -> String {
    if needle.trim().is_empty() {
        return String::new();
    }
    let pattern = match word {
        true => format!(r"\b{}\b", regex::escape(needle)),
        false => regex::escape(needle),
    };
    let Ok(regex) = Regex::new(&pattern) else {
        return String::new();
    };
    let mut lines: Vec<String> = Vec::new();
    for entry in files_under(workspace.root(), VISITED_FILES) {
        if lines.len() >= WRITTEN_AT {
            break;
        }
        if entry.metadata().map_or(true, |m| m.len() > MAX_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let shown = workspace.relative(entry.path());
        for (index, line) in text.lines().enumerate() {
            if lines.len() >= WRITTEN_AT {
                break;
            }
            if regex.is_match(line) {
                let text: String = line.trim().chars().take(LINE_CHARS).collect();
                lines.push(format!("`{shown}:{}`: {text}", index + 1));
            }
        }
    }
    match lines.as_slice() {
        [] => String::new(),
        [one] => format!("; the name is written at {one}"),
        many => format!("; the name is written at {}", many.join(", ")),
    }
}

fn ticked(paths: &[String]) -> String {
    paths
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The last part of a written path.
fn file_name(written: &str) -> String {
    written
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(written)
        .to_string()
}

/// A display path's file name without its extension.
fn file_stem(shown: &str) -> String {
    let name = file_name(shown);
    name.split('.').next().unwrap_or(&name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::ToolLimits;

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        let ws = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_misspelled_file_shows_the_closest_name_and_the_line_that_writes_it() {
        let (_dir, ws) = workspace(&[
            ("pages/summary.txt", "s\n"),
            ("pages/body.txt", "b\n"),
            (
                "scripts/build.sh",
                "#!/bin/sh\nset -e\ncat pages/body.txt pages/smumary.txt > out.txt\n",
            ),
        ]);
        let note = missing_paths(
            &ws,
            ws.root(),
            "cat: pages/smumary.txt: No such file or directory\n",
        );
        assert_eq!(
            note,
            "\nnote: `pages/smumary.txt` does not exist; closest files: `pages/summary.txt`; the name is written at `scripts/build.sh:3`: cat pages/body.txt pages/smumary.txt > out.txt."
        );
    }

    #[test]
    fn a_python_module_under_another_name_is_shown_with_its_import() {
        let (_dir, ws) = workspace(&[
            ("tools/strutil.py", "def bullet(x):\n    return x\n"),
            (
                "tools/generate.py",
                "from str_util import bullet\nprint(bullet('a'))\n",
            ),
        ]);
        let output = "Traceback (most recent call last):\n  File \"tools/generate.py\", line 1, in <module>\n    from str_util import bullet\nModuleNotFoundError: No module named 'str_util'\n";
        let note = missing_paths(&ws, ws.root(), output);
        assert_eq!(
            note,
            "\nnote: no module `str_util` is in the workspace; closest files: `tools/strutil.py`; the name is written at `tools/generate.py:1`: from str_util import bullet."
        );
    }

    #[test]
    fn node_relative_modules_and_missing_directories_are_read() {
        let (_dir, ws) = workspace(&[
            ("lib/format.js", "module.exports = {};\n"),
            ("build.js", "const f = require('./lib/formatt');\n"),
            ("make.sh", "echo hi > dist/out.txt\n"),
        ]);
        let node = missing_paths(
            &ws,
            ws.root(),
            "Error: Cannot find module './lib/formatt'\nRequire stack:\n",
        );
        assert!(
            node.contains(
                "no module `./lib/formatt` is in the workspace; closest files: `lib/format.js`"
            ) && node.contains("`build.js:1`"),
            "{node}"
        );
        let dir = missing_paths(
            &ws,
            ws.root(),
            "make.sh: 1: cannot create dist/out.txt: Directory nonexistent\n",
        );
        assert!(
            dir.starts_with(
                "\nnote: the directory `dist/` does not exist; the name is written at `make.sh:1`"
            ),
            "{dir}"
        );
    }

    #[test]
    fn nothing_is_said_for_names_outside_the_workspace_packages_or_files_that_exist() {
        let (_dir, ws) = workspace(&[("a.txt", "x\n")]);
        for output in [
            "cat: /etc/nothing-here: No such file or directory\n",
            "Error: Cannot find module 'express'\n",
            "cat: a.txt: No such file or directory\n",
            "all good\n",
        ] {
            assert_eq!(missing_paths(&ws, ws.root(), output), "", "{output}");
        }
    }
}
