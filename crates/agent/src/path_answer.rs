//! A task that asks which file holds something, answered without a path of the
//! workspace ("The file `search` defines the class") while a result names one: the
//! answer is held once and the result that names a file is shown again.

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

/// Whether `text` names a file of the workspace at `root` by its path from the root
/// (`store/accounts.py`, also as `store/accounts.py:1:` in a search line).
pub(crate) fn names_a_file(text: &str, root: &Path) -> bool {
    text.split(|c: char| c.is_whitespace() || "`'\"()[]<>,;*".contains(c))
        .filter_map(|token| {
            let token = token.split(':').next()?.trim_end_matches(['.', '!', '?']);
            let token = token.strip_prefix("./").unwrap_or(token);
            let inside = !token.is_empty() && !token.starts_with('/') && !token.contains("..");
            inside.then_some(token)
        })
        .any(|token| root.join(token).is_file())
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

/// The note for an answer that names no file, with the result that names one.
pub(crate) fn no_path_note(tool: &str, result: &str) -> String {
    format!(
        "That was not an answer: the task asks for a file's path, and your reply names no file of the workspace. `{tool}` already ran, and its result was:\n{}\nReply with the path of the file the task asks for, written as this result writes it.",
        crate::prompt::result_excerpt(result, 600)
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
}
