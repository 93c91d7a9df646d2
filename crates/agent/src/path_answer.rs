//! A task that asks which file holds something, answered without a path of the
//! workspace ("The file `search` defines the class") while a result names one: the
//! answer is held once and the result that names a file is shown again. An answer
//! whose path misses exactly one file only by case or a leading dot
//! (`config/service.env` for `.config/service.env`) is held once, told that file's
//! path; the answer stays the model's own.

use std::path::Path;

use rein_protocol::{Message, Role};

/// Phrases of a task that asks for a file's path.
const ASKS_FOR_A_PATH: [&str; 8] = [
    "file's path",
    "path of the file",
    "path to the file",
    "file path",
    "which file",
    "what file",
    "answer with the path",
    "name of the file",
];

/// Whether `task` asks for the path of a file.
pub(crate) fn asks_for_a_path(task: &str) -> bool {
    let lower = task.to_lowercase();
    ASKS_FOR_A_PATH.iter().any(|phrase| lower.contains(phrase))
}

/// The words of `text` that may be paths inside the workspace: no absolute path, no
/// `..`, a search line's `:line:` and a sentence's last stop cut off, `./` dropped.
fn inside_paths(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "`'\"()[]<>,;*".contains(c))
        .filter_map(|token| {
            let token = token.split(':').next()?.trim_end_matches(['.', '!', '?']);
            let token = token.strip_prefix("./").unwrap_or(token);
            let inside = !token.is_empty() && !token.starts_with('/') && !token.contains("..");
            inside.then_some(token)
        })
}

/// Whether `text` names a file of the workspace at `root` by its path from the root
/// (`store/accounts.py`, also as `store/accounts.py:1:` in a search line).
pub(crate) fn names_a_file(text: &str, root: &Path) -> bool {
    inside_paths(text).any(|token| root.join(token).is_file())
}

/// The first path of `text` that is no file of the workspace at `root` but names
/// exactly one once case and each part's leading dot are set aside, with that file's
/// path: (`config/service.env`, `.config/service.env`).
pub(crate) fn near_miss(text: &str, root: &Path) -> Option<(String, String)> {
    inside_paths(text)
        .filter(|token| token.contains('/') || token.contains('.'))
        .filter(|token| !root.join(token).exists())
        .find_map(|token| {
            let mut dir = root.to_path_buf();
            let mut parts = Vec::new();
            for part in token.split('/').filter(|p| !p.is_empty()) {
                let name = only_entry_like(&dir, part)?;
                dir.push(&name);
                parts.push(name);
            }
            dir.is_file().then(|| (token.to_string(), parts.join("/")))
        })
}

/// The one entry of `dir` whose name is `part` up to case and a leading dot.
fn only_entry_like(dir: &Path, part: &str) -> Option<String> {
    let key = |name: &str| name.trim_start_matches('.').to_lowercase();
    let wanted = key(part);
    if wanted.is_empty() {
        return None;
    }
    let mut found = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| key(name) == wanted);
    let name = found.next()?;
    found.next().is_none().then_some(name)
}

/// The latest tool result in `history` that names a file of the workspace, with the
/// tool's name.
pub(crate) fn result_naming_a_file(history: &[Message], root: &Path) -> Option<(String, String)> {
    history.iter().rev().find_map(|message| {
        let content = message.content.as_deref()?;
        let name = message.name.as_deref()?;
        (message.role == Role::Tool && names_a_file(content, root))
            .then(|| (name.to_string(), content.to_string()))
    })
}

/// The note for an answer whose path `said` is no file of the workspace while `file`
/// differs from it only by case or a leading dot.
pub(crate) fn near_miss_note(said: &str, file: &str) -> String {
    format!(
        "Check the path: `{said}` is not a file of the workspace; `{file}` is, and differs from it only by letter case or a leading dot. If `{file}` is the file the task asks about, reply again with its path written exactly so."
    )
}

/// The note for an answer that names no file, with the result that names one.
pub(crate) fn no_path_note(tool: &str, result: &str) -> String {
    format!(
        "That was not an answer: the task asks for a file's path, and your reply names no file of the workspace. `{tool}` already ran, and its result was:\n{}\nReply with the path of the file the task asks for, written as this result writes it.",
        crate::result_text::result_excerpt(result, 600)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_asking_which_file_asks_for_a_path() {
        assert!(asks_for_a_path(
            "Which file defines the class named userrepository? Answer with the file's path."
        ));
        assert!(asks_for_a_path("Some file in this project sets API_TOKEN_TTL. Find it and answer with the file's path and the value it sets."));
        assert!(!asks_for_a_path(
            "How many bytes is firmware.bin? Answer with the number."
        ));
    }

    #[test]
    fn only_a_path_of_an_existing_file_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("store")).unwrap();
        std::fs::write(
            dir.path().join("store/accounts.py"),
            "class UserRepository:\n",
        )
        .unwrap();
        let root = dir.path();
        assert!(names_a_file("It is `store/accounts.py`.", root));
        assert!(names_a_file(
            "store/accounts.py:1: class UserRepository:",
            root
        ));
        assert!(names_a_file("./store/accounts.py", root));
        assert!(!names_a_file(
            "The file `search` defines the class named `userrepository`.",
            root
        ));
        assert!(!names_a_file("accounts.py", root));
        assert!(!names_a_file("store", root));
        assert!(!names_a_file("../store/accounts.py /etc/passwd", root));
    }

    #[test]
    fn a_path_off_by_case_or_a_leading_dot_is_given_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".config")).unwrap();
        std::fs::write(root.join(".config/service.env"), "API_TOKEN_TTL=5400\n").unwrap();
        std::fs::create_dir_all(root.join("Store")).unwrap();
        std::fs::write(root.join("Store/Accounts.py"), "class A:\n").unwrap();
        assert_eq!(
            near_miss("`config/service.env` sets it to `5400`.", root),
            Some(("config/service.env".into(), ".config/service.env".into()))
        );
        assert_eq!(
            near_miss("It is in store/accounts.py.", root),
            Some(("store/accounts.py".into(), "Store/Accounts.py".into()))
        );
        // A real path, a word, a directory, a path outside: none.
        assert_eq!(near_miss("`.config/service.env` sets 5400", root), None);
        assert_eq!(near_miss("The value is 5400", root), None);
        assert_eq!(near_miss("see config/", root), None);
        assert_eq!(near_miss("../config/service.env", root), None);
        // Two entries alike (`notes`, `.notes`) leave the path in doubt: none.
        std::fs::write(root.join("notes.txt"), "a").unwrap();
        std::fs::write(root.join(".notes.txt"), "b").unwrap();
        assert_eq!(near_miss("NOTES.txt", root), None);
    }

    #[test]
    fn the_near_miss_note_names_both_paths() {
        let note = near_miss_note("config/service.env", ".config/service.env");
        assert!(
            note.contains("`config/service.env` is not a file"),
            "{note}"
        );
        assert!(note.contains("`.config/service.env` is"), "{note}");
    }
}
