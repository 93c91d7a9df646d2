//! The source a failing command points at: the workspace lines its traceback or error
//! names (`File "x.py", line 6`, `(x.js:5:8)`, `x.rs:3:5`, `x.sh: line 3:`) and the
//! definitions of the functions those lines call, found in the workspace with the
//! comment or docstring that says what each should do — what a fix needs next, shown
//! with the failure instead of left to two more calls. No language is parsed: the
//! locations, calls and definitions are read by their common written shapes.

use std::path::{Path, PathBuf};

use regex::Regex;

use super::workspace_files::files_under;
use crate::workspace::Workspace;

/// Locations of the output looked at, at most.
const LOCATIONS: usize = 4;
/// Definitions shown, at most.
const DEFINITIONS: usize = 3;
/// Lines of one definition shown, at most (its leading comment included).
const DEFINITION_LINES: usize = 14;
/// Characters the whole note may add.
const NOTE_CHARS: usize = 1_600;
/// Files looked through for definitions, at most.
const VISITED_FILES: usize = 2_000;
/// Files larger than this are not looked through.
const MAX_BYTES: u64 = 256 * 1024;

/// Words that precede `(` without being a call of a function defined somewhere.
const NOT_CALLS: &[&str] = &[
    "if",
    "elif",
    "for",
    "while",
    "switch",
    "return",
    "assert",
    "print",
    "function",
    "def",
    "catch",
    "require",
    "typeof",
    "and",
    "or",
    "not",
    "in",
    "lambda",
    "super",
    "import",
    "new",
    "await",
    "yield",
    "with",
    "match",
    "fn",
    "func",
    "echo",
    "exit",
    "len",
    "str",
    "int",
    "float",
    "list",
    "dict",
    "set",
    "tuple",
    "range",
    "sum",
    "min",
    "max",
    "sorted",
    "isinstance",
    "repr",
    "format",
    "open",
    "Array",
    "Object",
    "String",
    "Number",
    "JSON",
];

/// A place an output names: a workspace file and a 1-based line.
#[derive(Debug, Clone, PartialEq)]
struct Location {
    path: PathBuf,
    shown: String,
    line: usize,
}

/// The note a failing command's result ends with: each function the failing lines call
/// and its definition in the workspace. Empty when the output names no workspace line
/// or its calls have no definition there.
pub(crate) fn failure_source(workspace: &Workspace, cwd: &Path, output: &str) -> String {
    let locations = locations(workspace, cwd, output);
    let mut notes = Vec::new();
    let mut shown_names: Vec<String> = Vec::new();
    for location in &locations {
        let Some(text) = line_of(&location.path, location.line) else {
            continue;
        };
        let mut names = called_names(&text);
        if is_script(&location.shown) {
            names.extend(first_command(&text));
        }
        for name in names {
            if shown_names.contains(&name) || notes.len() >= DEFINITIONS {
                continue;
            }
            let Some((file, start, body)) = definition(workspace, &name) else {
                continue;
            };
            // The failing line is the definition itself: it shows nothing new.
            if file == location.shown && start == location.line {
                continue;
            }
            shown_names.push(name.clone());
            notes.push(format!(
                "`{}:{}` calls `{name}`, defined in `{file}`:\n{body}",
                location.shown, location.line
            ));
        }
    }
    let mut out = String::new();
    for note in notes {
        if out.len() + note.len() > NOTE_CHARS {
            break;
        }
        out.push_str("\nnote: ");
        out.push_str(&note);
    }
    out
}

/// The workspace lines `output` names, innermost (last named) first, at most
/// `LOCATIONS`.
fn locations(workspace: &Workspace, cwd: &Path, output: &str) -> Vec<Location> {
    let patterns = [
        r#"File "([^"]+)", line (\d+)"#,
        r"([A-Za-z0-9_./\\-]+): line (\d+):",
        r"([A-Za-z0-9_./\\-]*[A-Za-z0-9_-]\.[A-Za-z0-9]{1,6}):(\d+)",
    ];
    let mut found: Vec<(usize, Location)> = Vec::new();
    for pattern in patterns {
        let Ok(regex) = Regex::new(pattern) else {
            continue;
        };
        for caps in regex.captures_iter(output) {
            let (Some(path), Some(line), Some(at)) = (caps.get(1), caps.get(2), caps.get(0)) else {
                continue;
            };
            let Ok(line) = line.as_str().parse::<usize>() else {
                continue;
            };
            if let Some(location) = resolve(workspace, cwd, path.as_str(), line) {
                if !found.iter().any(|(_, l)| *l == location) {
                    found.push((at.start(), location));
                }
            }
        }
    }
    found.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    found.into_iter().map(|(_, l)| l).take(LOCATIONS).collect()
}

/// A named file as a workspace location: absolute under the root, or relative to the
/// shell's directory or the root.
fn resolve(workspace: &Workspace, cwd: &Path, named: &str, line: usize) -> Option<Location> {
    if line == 0 {
        return None;
    }
    let root = workspace.root();
    let candidates = [PathBuf::from(named), cwd.join(named), root.join(named)];
    let path = candidates
        .into_iter()
        .filter(|p| p.is_absolute())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .find(|p| p.starts_with(root) && p.is_file())?;
    Some(Location {
        shown: workspace.relative(&path),
        path,
        line,
    })
}

/// The text of 1-based `line` of `path`.
fn line_of(path: &Path, line: usize) -> Option<String> {
    let text = read_small(path)?;
    text.lines().nth(line.checked_sub(1)?).map(str::to_string)
}

fn read_small(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if metadata.len() > MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The names a line calls as plain functions (not methods, not keywords), in order.
fn called_names(text: &str) -> Vec<String> {
    let Ok(call) = Regex::new(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*\(") else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for caps in call.captures_iter(text) {
        let Some(name) = caps.get(1) else { continue };
        let before = text[..name.start()].chars().last();
        if before == Some('.') || NOT_CALLS.contains(&name.as_str()) {
            continue;
        }
        if !names.iter().any(|n| n == name.as_str()) {
            names.push(name.as_str().to_string());
        }
    }
    names
}

/// Whether a file is a shell script, whose lines call functions without brackets.
fn is_script(shown: &str) -> bool {
    [".sh", ".bash"].iter().any(|ext| shown.ends_with(ext))
}

/// The command a shell line starts with, when it is a name a script could define.
fn first_command(text: &str) -> Option<String> {
    let word = text.split_whitespace().next()?;
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && word.chars().next().is_some_and(|c| !c.is_ascii_digit());
    let keyword = [
        "if", "then", "else", "fi", "for", "do", "done", "while", "case", "esac", "set", "cd",
        "echo", "exit", "export", "local", "return",
    ]
    .contains(&word);
    (plain && !keyword).then(|| word.to_string())
}

/// The first definition of `name` in the workspace: its file, its 1-based line and its
/// lines as shown (a comment just above it included, the body up to where the
/// indentation returns).
fn definition(workspace: &Workspace, name: &str) -> Option<(String, usize, String)> {
    let name = regex::escape(name);
    let pattern = format!(
        r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:(?:def|function\*?|fn|func|sub|proc)\s+{name}\b|(?:const|let|var)\s+{name}\s*=|{name}\s*\(\)\s*\{{)"
    );
    let regex = Regex::new(&pattern).ok()?;
    files_under(workspace.root(), VISITED_FILES).find_map(|entry| {
        let text = read_small(entry.path())?;
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|line| regex.is_match(line))?;
        Some((
            workspace.relative(entry.path()),
            at + 1,
            shown_definition(&lines, at),
        ))
    })
}

/// The definition at index `at` of `lines` as a result shows it, numbered.
fn shown_definition(lines: &[&str], at: usize) -> String {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let is_comment = |line: &str| {
        let t = line.trim_start();
        ["#", "//", "/*", "*", "--"]
            .iter()
            .any(|m| t.starts_with(m))
    };
    let mut start = at;
    while start > 0 && at - start < 3 && is_comment(lines[start - 1]) {
        start -= 1;
    }
    let base = indent(lines[at]);
    let mut end = at + 1;
    while end < lines.len() && end - start < DEFINITION_LINES {
        let line = lines[end];
        if line.trim().is_empty() || indent(line) > base {
            end += 1;
            continue;
        }
        // A closing bracket at the definition's own indentation ends it, included.
        if line.trim_start().starts_with(['}', ')', ']']) {
            end += 1;
        }
        break;
    }
    while end > at + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    (start..end)
        .map(|i| format!("{:>5}| {}", i + 1, lines[i]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_files::workspace;

    #[test]
    fn a_python_traceback_gets_the_called_function_with_its_docstring() {
        let (_dir, ws) = workspace(&[
            (
                "tools/test_stats.py",
                "from stats import is_overdue\n\nassert is_overdue(43, 39)\nassert not is_overdue(39, 39)\n",
            ),
            (
                "tools/stats.py",
                "import math\n\ndef is_overdue(days, limit):\n    \"\"\"Past the limit, not on it.\"\"\"\n    return days >= limit\n\n\ndef other():\n    pass\n",
            ),
        ]);
        let output = format!(
            "Traceback (most recent call last):\n  File \"{}/tools/test_stats.py\", line 4, in <module>\n    assert not is_overdue(39, 39)\nAssertionError\n",
            ws.root().display()
        );
        let note = failure_source(&ws, ws.root(), &output);
        assert_eq!(
            note,
            "\nnote: `tools/test_stats.py:4` calls `is_overdue`, defined in `tools/stats.py`:\n    3| def is_overdue(days, limit):\n    4|     \"\"\"Past the limit, not on it.\"\"\"\n    5|     return days >= limit"
        );
    }

    #[test]
    fn a_node_stack_gets_the_function_and_its_comment_but_not_methods() {
        let (_dir, ws) = workspace(&[
            (
                "test_helpers.js",
                "const assert = require('assert');\nconst { countIn } = require('./lib/helpers');\nassert.strictEqual(countIn([1, 5], 1, 5), 2);\n",
            ),
            (
                "lib/helpers.js",
                "// Values from low to high, both included.\nfunction countIn(values, low, high) {\n  return values.filter((v) => low <= v && v < high).length;\n}\n\nmodule.exports = { countIn };\n",
            ),
        ]);
        let output = format!(
            "node:assert:124\n  throw new AssertionError(obj);\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n1 !== 2\n\n    at Object.<anonymous> ({}/test_helpers.js:3:8)\n    at Module._compile (node:internal/modules/cjs/loader:1105:14)\n",
            ws.root().display()
        );
        let note = failure_source(&ws, ws.root(), &output);
        assert!(
            note.contains("`test_helpers.js:3` calls `countIn`, defined in `lib/helpers.js`:\n    1| // Values from low to high, both included.\n    2| function countIn(values, low, high) {\n    3|   return values.filter((v) => low <= v && v < high).length;\n    4| }"),
            "{note}"
        );
        assert!(!note.contains("strictEqual"), "{note}");
    }

    #[test]
    fn an_output_naming_no_workspace_line_adds_nothing() {
        let (_dir, ws) = workspace(&[("a.py", "def f():\n    pass\n")]);
        assert_eq!(failure_source(&ws, ws.root(), "error: no such file\n"), "");
        assert_eq!(
            failure_source(&ws, ws.root(), "File \"/usr/lib/python3/x.py\", line 3\n"),
            ""
        );
        // A line whose calls have no definition in the workspace.
        assert_eq!(
            failure_source(&ws, ws.root(), "a.py:2: print(len(x))\n"),
            ""
        );
    }

    #[test]
    fn a_shell_script_error_names_its_line() {
        let (_dir, ws) = workspace(&[
            ("build.sh", "#!/bin/sh\n. ./lib.sh\nbundle_docs out\n"),
            ("lib.sh", "# Joins the docs into one file.\nbundle_docs() {\n  cat docs/*.md > \"$1\"/all.md\n}\n"),
        ]);
        let note = failure_source(
            &ws,
            ws.root(),
            "build.sh: line 3: out/all.md: No such file or directory\n",
        );
        assert!(
            note.contains("`build.sh:3` calls `bundle_docs`, defined in `lib.sh`:\n    1| # Joins the docs into one file.\n    2| bundle_docs() {"),
            "{note}"
        );
    }
}
