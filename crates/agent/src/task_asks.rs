//! What the task asks of the workspace, read once from its words: the file to write
//! (and the sentence that says what goes in it), the existing file to change, whether
//! it asks for a new file or a change at all, and the files' state at the start.

use std::path::Path;

use regex::Regex;

/// The file the task asks to be written (`… into a new file TODO.md`, `save it as
/// out.json`), when it names one.
pub(crate) fn output_file(task: &str) -> Option<String> {
    let pattern = Regex::new(
        r#"(?i)\b(?:write|writes|save|saves|create|creates|produce|generate|put|store)\b[^.!?\n]{0,80}?\b(?:in|into|to|as|named|called|file)\s+(?:a\s+)?(?:new\s+)?(?:file\s+)?[`'"]?([A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]{1,8})\b"#,
    )
    .ok()?;
    // A name with no extension only right after the word "file", and quoted
    // (`Makefile`) or in capitals (VERSION): "write it to a file VERSION", not
    // "write it to disk" or "save a file for me".
    let bare = Regex::new(
        r#"(?i:\b(?:write|writes|save|saves|create|creates|produce|generate|put|store)\b[^.!?\n]{0,80}?\bfile\s+(?:named\s+|called\s+)?)(?:[`'"]([A-Za-z0-9_][A-Za-z0-9_-]*)[`'"]|\b([A-Z][A-Z0-9_-]+)\b)"#,
    )
    .ok()?;
    let found = match pattern.captures(task) {
        Some(caps) => caps.get(1)?.as_str(),
        None => {
            let caps = bare.captures(task)?;
            caps.get(1).or_else(|| caps.get(2))?.as_str()
        }
    };
    let file = found.trim_end_matches(['.', ',']).to_string();
    (!file.contains("..") && !file.starts_with('/')).then_some(file)
}

/// The sentence of `task` that names `file` (at most 300 characters): what the task
/// says goes in it ("… and write just that code into a new file named incident.txt.").
pub(crate) fn sentence_naming<'a>(task: &'a str, file: &str) -> Option<&'a str> {
    let mut start = 0;
    let mut sentences = Vec::new();
    let chars: Vec<(usize, char)> = task.char_indices().collect();
    for (index, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(index + 1).map(|&(_, c)| c);
        if matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace) {
            sentences.push(&task[start..at + c.len_utf8()]);
            start = at + c.len_utf8();
        }
    }
    sentences.push(&task[start..]);
    sentences
        .into_iter()
        .map(str::trim)
        .find(|sentence| sentence.contains(file) && sentence.chars().count() <= 300)
}

/// The existing file the task asks to be changed (`change one constant in
/// pricing.py`, `fix the bug in src/main.py`), when it names one and does not say not
/// to (`do not change anything in README.md`).
pub(crate) fn file_to_change(task: &str) -> Option<String> {
    let pattern = Regex::new(
        r#"(?i)\b(?:change|changes|fix|edit|update|modify|bump|correct|replace|set)\b[^.!?\n]{0,80}?\b(?:in|of)\s+(?:the\s+)?(?:file\s+)?[`'"]?([A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]{1,8})\b"#,
    )
    .ok()?;
    let found = pattern
        .captures_iter(task)
        .find(|caps| !negated_at(task, caps.get(0).map_or(0, |m| m.start())))?;
    let file = found
        .get(1)?
        .as_str()
        .trim_end_matches(['.', ','])
        .to_string();
    (!file.contains("..") && !file.starts_with('/')).then_some(file)
}

/// Whether the task asks for a new file it does not name in a way
/// [`output_file`] reads (`create the next migration: … its file name is
/// <number>_add_orders_note.sql`), and does not say not to.
pub(crate) fn asks_to_create(task: &str) -> bool {
    let Ok(pattern) =
        Regex::new(r"(?i)\b(?:create|creates|add|write|save)\b[^.!?\n]{0,120}?\bfile\b")
    else {
        return false;
    };
    let asks = pattern
        .find_iter(task)
        .any(|found| !negated_at(task, found.start()));
    asks
}

/// Whether `task` asks for a change in so many words: a sentence (or a clause after a
/// comma) that opens with a verb of change (`Set the version of each one…`, `In app.py,
/// rename the function…`), not negated.
pub(crate) fn asks_to_change(task: &str) -> bool {
    let Ok(pattern) = Regex::new(
        r"(?i)(?:^|[.!?:;]\s+|,\s*|\n\s*)(?:please\s+|now\s+|then\s+)?(?:change|set|update|rename|replace|fix|edit|bump|add|remove|delete|modify|correct|move|insert)\b",
    ) else {
        return false;
    };
    let asks = pattern
        .find_iter(task)
        .any(|found| !negated_at(task, found.start()));
    asks
}

/// Whether the words of `task` just before byte `start` say not to ("do not",
/// "don't", "never").
fn negated_at(task: &str, start: usize) -> bool {
    let before = task[..start].to_lowercase();
    let before = before.trim_end();
    before.ends_with("not") || before.ends_with("n't") || before.ends_with("never")
}

/// A hash of `file`'s bytes in `workspace` (inside it only), or `None` when it cannot
/// be read.
pub(crate) fn content_hash(workspace: &rein_tools::Workspace, file: &str) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let path = workspace.resolve(file).ok()?;
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}

/// Whether the task's output file is missing from `root` (and was missing at the start,
/// so the task is to create it).
pub(crate) fn missing_output(root: &Path, file: &str) -> bool {
    !root.join(file).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_that_names_the_file_is_what_goes_in_it() {
        let task = "server.log is a long application log. Find that line, take the code from it (it looks like PG-0000), and write just that code into a new file named incident.txt. Then tell me the code.";
        assert_eq!(
            sentence_naming(task, "incident.txt"),
            Some("Find that line, take the code from it (it looks like PG-0000), and write just that code into a new file named incident.txt.")
        );
        assert_eq!(
            sentence_naming("Write the list to TODO.md", "TODO.md"),
            Some("Write the list to TODO.md")
        );
        assert_eq!(sentence_naming("Nothing here.", "TODO.md"), None);
    }

    #[test]
    fn the_output_file_is_found_in_the_task() {
        for (task, file) in [
            (
                "Find every TODO comment and write them all into a new file TODO.md, one per line.",
                "TODO.md",
            ),
            ("Summarize the log and save it as report.txt.", "report.txt"),
            (
                "Create a file named out/result.json with the totals.",
                "out/result.json",
            ),
            (
                "Write just that version number into a new file VERSION in this workspace.",
                "VERSION",
            ),
            ("Save the rules to a file called `Makefile`.", "Makefile"),
        ] {
            assert_eq!(output_file(task).as_deref(), Some(file), "{task}");
        }
        for task in [
            "Which file defines UserRepository?",
            "Fix the bug in src/main.py.",
            "Read notes.txt and tell me the secret.",
            "Write the totals to a file with one line per region.",
            "Save a file For me.",
        ] {
            assert_eq!(output_file(task), None, "{task}");
        }
    }

    #[test]
    fn the_file_to_change_is_found_in_the_task() {
        for (task, file) in [
            (
                "The fix is to change one constant in pricing.py to the value the test expects.",
                "pricing.py",
            ),
            (
                "Then change the chart-lib version of the api package in deps.json to that same version.",
                "deps.json",
            ),
            ("Fix the bug in `src/main.py`.", "src/main.py"),
        ] {
            assert_eq!(file_to_change(task).as_deref(), Some(file), "{task}");
        }
        for task in [
            "Do not change anything in README.md.",
            "Which file defines UserRepository?",
            "Change the port from 8080 to 9090 in it.",
            "Write the code into a new file named incident.txt.",
        ] {
            assert_eq!(file_to_change(task), None, "{task}");
        }
    }

    #[test]
    fn a_task_that_asks_for_a_new_file_is_found() {
        assert!(asks_to_create("List the folder to find the highest number in use. Then create the next migration: its number is one higher, written with 4 digits like the others, and its file name is <number>_add_orders_note.sql inside migrations/."));
        assert!(asks_to_create("Add a file with the license text."));
        for task in [
            "Which file defines UserRepository?",
            "Do not create any file; tell me the port.",
            "Create a summary of the log. Then read the file notes.txt.",
        ] {
            assert!(!asks_to_create(task), "{task}");
        }
    }

    #[test]
    fn a_task_that_asks_for_a_change_is_found() {
        for task in [
            "Every service under services/ has a VERSION file. Set the version of each one to 1.1.0.",
            "In app.py, rename the function `calc` to `calculate_total` and update its call.",
            "Fix the spelling mistake 'recieve' in docs/guide.md.",
            "Read the log. Then change the constant.",
        ] {
            assert!(asks_to_change(task), "{task}");
        }
        for task in [
            "Which file defines UserRepository?",
            "How many bytes is firmware.bin? Answer with the number.",
            "Do not change anything; tell me the port.",
            "The settings changed yesterday: what is the timeout?",
        ] {
            assert!(!asks_to_change(task), "{task}");
        }
    }
}
