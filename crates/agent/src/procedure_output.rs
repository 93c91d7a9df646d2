//! The output file of a procedure the task hands over to a file ("Read README.md and
//! carry out its release procedure"): once a call has read that file, the file its
//! steps say to create is the task's output, and an answer while it does not exist is
//! held — first for the files the steps name that no call has looked at, then for the
//! write itself, with the step that says what goes in it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use regex::Regex;
use rein_tools::Workspace;

use crate::execute::Memory;

/// Procedure files longer than this are not searched for a step.
const MAX_PROCEDURE_BYTES: u64 = 64 * 1024;
/// Lines of a step shown at most (its line and the lines that continue it).
const STEP_LINES: usize = 8;

/// An output file a procedure asks for that does not exist yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcedureOutput {
    /// The file that holds the procedure, as the task names it.
    pub source: String,
    /// The file its steps say to create.
    pub file: String,
    /// The step's lines, as the procedure writes them.
    pub step: String,
    /// Other files of the workspace the procedure names that no call has looked at.
    pub unread: Vec<String>,
}

/// Whether `task` hands its steps over to a file: it says to carry out, follow or
/// perform the procedure, steps or instructions something holds.
pub(crate) fn hands_over_steps(task: &str) -> bool {
    Regex::new(
        r"(?i)\b(?:carry\s+out|follow|perform|execute|complete|go\s+through)\b[^.!?\n]{0,60}?\b(?:procedure|steps|instructions|checklist|runbook)\b",
    )
    .is_ok_and(|pattern| pattern.is_match(task))
}

/// The output file of the procedure `task` hands over, when a call of this run has
/// read the file that holds it and the file its steps create does not exist.
pub(crate) fn missing_procedure_output(
    task: &str,
    memory: &Memory,
    workspace: &Workspace,
) -> Option<ProcedureOutput> {
    if memory.output_file.is_some() || !hands_over_steps(task) {
        return None;
    }
    memory
        .task_paths
        .iter()
        .filter(|named| !named.dir)
        .find_map(|named| procedure_output(&named.path, workspace, &memory.seen_files))
}

/// Extensions of files that hold prose a procedure may be written in (a name without
/// one, `README`, counts too); a source file's comments are no procedure.
const PROSE_EXTENSIONS: [&str; 7] = ["md", "markdown", "txt", "rst", "adoc", "org", "text"];

/// Verbs that open a step that makes a file.
const MAKING_VERBS: [&str; 6] = ["create", "write", "save", "generate", "produce", "make"];

/// The output `source` asks for, when `seen` holds it and that output is missing.
fn procedure_output(
    source: &str,
    workspace: &Workspace,
    seen: &HashSet<PathBuf>,
) -> Option<ProcedureOutput> {
    let prose = Path::new(source)
        .extension()
        .and_then(|e| e.to_str())
        .is_none_or(|e| PROSE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    let resolved = workspace.resolve(source).ok()?;
    if !prose
        || !seen.contains(&resolved)
        || std::fs::metadata(&resolved).ok()?.len() > MAX_PROCEDURE_BYTES
    {
        return None;
    }
    let text = std::fs::read_to_string(&resolved).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let steps: Vec<usize> = (0..lines.len())
        .filter(|&at| step_text(lines[at]).is_some())
        .collect();
    // The first step that opens with a verb that makes a file, and the file it names.
    let (at, file) = steps.iter().find_map(|&at| {
        let step = step_text(lines[at])?;
        let verb = step.split_whitespace().next()?.to_lowercase();
        if !MAKING_VERBS.contains(&verb.as_str()) {
            return None;
        }
        Some((at, crate::guards::output_file(step)?))
    })?;
    if !crate::guards::missing_output(workspace.root(), &file) {
        return None;
    }
    let step = with_continuation(&lines, at);
    // The files the steps name (not the rest of the file: a README names many).
    let step_lines: Vec<&str> = steps.iter().map(|&at| lines[at]).collect();
    let unread = named_files(&step_lines.join("\n"), workspace)
        .into_iter()
        .filter(|named| *named != file)
        .filter(|named| {
            workspace
                .resolve(named)
                .is_ok_and(|path| !seen.contains(&path) && path != resolved)
        })
        .collect();
    Some(ProcedureOutput {
        source: source.to_string(),
        file,
        step,
        unread,
    })
}

/// The text of a list item (`3. Create …`, `2) …`, `- Create …`, `* …`) after its
/// marker; `None` for any other line.
fn step_text(line: &str) -> Option<&str> {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(rest.trim());
    }
    let (_, rest) = crate::task_steps::numbered_item(line)?;
    rest.starts_with(' ').then(|| rest.trim())
}

/// The files of `workspace` that `text` names, in its order, each once: in backticks
/// (`` `VERSION` ``), or unquoted with a `.` or `/` inside (`docs/notes.md`).
fn named_files(text: &str, workspace: &Workspace) -> Vec<String> {
    let quoted = text
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|inside| !inside.is_empty() && !inside.contains(char::is_whitespace))
        .filter(|inside| workspace.resolve(inside).is_ok_and(|path| path.is_file()))
        .map(str::to_string);
    let unquoted = crate::task_paths::named_paths(text, workspace)
        .into_iter()
        .filter(|named| !named.dir)
        .map(|named| named.path);
    let mut files: Vec<String> = Vec::new();
    for file in quoted.chain(unquoted) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

/// Line `at` of `lines`, with the lines after it that continue it (indented deeper,
/// or items of a list under it).
fn with_continuation(lines: &[&str], at: usize) -> String {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let opening = indent(lines[at]);
    let mut step = vec![lines[at].trim_end()];
    for line in lines.iter().skip(at + 1).take(STEP_LINES - 1) {
        let trimmed = line.trim_start();
        let continues = !trimmed.is_empty()
            && (indent(line) > opening || trimmed.starts_with("- ") || trimmed.starts_with("* "));
        if !continues {
            break;
        }
        step.push(line.trim_end());
    }
    step.join("\n")
}

/// The note of an answer held while `output` is missing: the files to look at first
/// (with the call that reads the first, written by `read_call`), or the write to make.
pub(crate) fn procedure_note(
    output: &ProcedureOutput,
    read_call: impl Fn(&str) -> String,
) -> String {
    let ProcedureOutput {
        source,
        file,
        step,
        unread,
    } = output;
    match unread.first() {
        Some(first) => format!(
            "Not done yet: the procedure in `{source}` creates `{file}`, which does not exist yet, and its steps need {}, which no call has read. Read it now:\n{}\nthen take the procedure's next step.",
            crate::guards::backticked_list(unread),
            read_call(first)
        ),
        None => format!(
            "Not done yet: the procedure in `{source}` creates `{file}`, and it does not exist yet. Its step says:\n```\n{step}\n```\nWrite it now with write_file: path `{file}`, and as content what that step says, each `<…>` replaced by the value the results above gave for it. Then reply with a short final answer."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# ledger-api\n\n## Release procedure\n\n1. Read the version number from the file `VERSION`.\n2. Read the owner from the file `OWNERS`.\n3. Create the file `release/notes.txt` with exactly two lines:\n   - line 1: `Release <version>`\n   - line 2: `Approved-by: <handle>`\n\nDo not change any other file.\n";

    #[test]
    fn a_task_hands_over_its_steps_in_so_many_words() {
        for task in [
            "Read README.md and carry out its release procedure, step by step.",
            "Follow the instructions in SETUP.md.",
            "Perform the steps listed in docs/deploy.txt",
        ] {
            assert!(hands_over_steps(task), "{task}");
        }
        for task in [
            "Summarize the release procedure in README.md.",
            "Which file describes the steps?",
            "Follow up on the failing test in app.py.",
        ] {
            assert!(!hands_over_steps(task), "{task}");
        }
    }

    #[test]
    fn the_step_is_its_line_and_the_lines_that_continue_it() {
        let lines: Vec<&str> = README.lines().collect();
        let at = lines
            .iter()
            .position(|line| line.contains("release/notes.txt"))
            .expect("the step");
        assert_eq!(
            with_continuation(&lines, at),
            "3. Create the file `release/notes.txt` with exactly two lines:\n   - line 1: `Release <version>`\n   - line 2: `Approved-by: <handle>`"
        );
        assert_eq!(step_text("3. Create it"), Some("Create it"));
        assert_eq!(step_text("- Create it"), Some("Create it"));
        assert_eq!(step_text("2024 was a year"), None);
        assert_eq!(step_text("Create it"), None);
    }

    #[test]
    fn only_a_step_that_makes_a_file_names_the_output_and_only_steps_name_inputs() {
        let readme = "# app\n\nThe server writes logs to `server.log`; see `CONTRIBUTING.md`.\n\n## Release\n\n1. Read the version from `VERSION`.\n2. Create the file `release/notes.txt` holding `Release <version>`.\n";
        let (_dir, workspace) = workspace_with(&[
            ("README.md", readme),
            ("VERSION", "1.0.0\n"),
            ("CONTRIBUTING.md", "Be kind.\n"),
            ("notes.py", "# writes the report to report.csv\n"),
        ]);
        let mut seen = HashSet::new();
        seen.insert(workspace.resolve("README.md").expect("resolves"));
        seen.insert(workspace.resolve("notes.py").expect("resolves"));
        let output = procedure_output("README.md", &workspace, &seen).expect("output");
        assert_eq!(output.file, "release/notes.txt");
        assert_eq!(output.unread, vec!["VERSION".to_string()]);
        // A source file's comments are no procedure.
        assert_eq!(procedure_output("notes.py", &workspace, &seen), None);
    }

    fn workspace_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, content) in files {
            std::fs::write(dir.path().join(path), content).expect("write");
        }
        let workspace =
            Workspace::new(dir.path(), rein_tools::ToolLimits::default()).expect("workspace");
        (dir, workspace)
    }

    #[test]
    fn the_output_waits_for_the_procedure_to_be_read_and_names_what_is_unread() {
        let (_dir, workspace) = workspace_with(&[
            ("README.md", README),
            ("VERSION", "4.7.2\n"),
            ("OWNERS", "release: @m.haddad\n"),
        ]);
        let task = "Read README.md and carry out its release procedure, step by step.";
        let mut memory = Memory {
            task_paths: crate::task_paths::named_paths(task, &workspace),
            ..Memory::default()
        };
        assert_eq!(missing_procedure_output(task, &memory, &workspace), None);
        let seen = |path: &str| workspace.resolve(path).expect("resolves");
        memory.seen_files.insert(seen("README.md"));
        memory.seen_files.insert(seen("VERSION"));
        let output = missing_procedure_output(task, &memory, &workspace).expect("output");
        assert_eq!(output.file, "release/notes.txt");
        assert_eq!(output.unread, vec!["OWNERS".to_string()]);
        let note = procedure_note(&output, |path| format!("read {path}"));
        assert!(note.contains("read OWNERS"), "{note}");
        memory.seen_files.insert(seen("OWNERS"));
        let output = missing_procedure_output(task, &memory, &workspace).expect("output");
        assert!(output.unread.is_empty());
        let note = procedure_note(&output, |path| format!("read {path}"));
        assert!(note.contains("`Approved-by: <handle>`"), "{note}");
        // Written: nothing is missing any more.
        std::fs::create_dir(workspace.root().join("release")).expect("dir");
        std::fs::write(workspace.root().join("release/notes.txt"), "x").expect("write");
        assert_eq!(missing_procedure_output(task, &memory, &workspace), None);
        // A task that does not hand its steps over has no procedure output.
        std::fs::remove_file(workspace.root().join("release/notes.txt")).expect("remove");
        let other = "Summarize README.md.";
        assert_eq!(missing_procedure_output(other, &memory, &workspace), None);
    }
}
