//! The task's text in a conversation, and the words of it worth looking for in the
//! workspace (`TODO` in "find every TODO comment … into TODO.md"): what the agent
//! searches for when a model looks for the task's output file before it has anything
//! to put in it.

use rein_protocol::{Message, Role};

/// The task: the first user message of `history` without the workspace facts the run
/// put before it (empty when there is none).
pub(crate) fn task_of(history: &[Message]) -> &str {
    let opening = history
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    crate::prompt::task_in(opening)
}

/// Words of a request that say nothing about where its content is.
#[rustfmt::skip]
pub(crate) const PLAIN_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "before", "but", "by", "can", "change", "comment", "comments", "content", "contents",
    "create", "directory", "do", "does", "each", "every", "file", "files", "find", "folder",
    "for", "from", "full", "get", "give", "has", "have", "her", "here", "his", "how", "in",
    "into", "is", "it", "its", "just", "line", "lines", "list", "make", "name", "names",
    "new", "not", "number", "of", "on", "one", "only", "or", "other", "our", "out", "path",
    "paths", "per", "please", "put", "read", "run", "save", "say", "search", "should",
    "show", "so", "some", "tell", "text", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "under", "up", "use", "value",
    "values", "was", "what", "when", "where", "which", "while", "who", "why", "will",
    "with", "within", "workspace", "write", "you", "your",
];

/// The task's words to search the workspace for, best first, at most `limit`: words
/// the task marks (in backticks or quotes, or written with capitals past the first
/// letter: `TODO`, `FIXME`, `maxRetries`), then its other words of three letters or
/// more, each once, in the task's order. Paths and file names (`TODO.md`), numbers
/// and plain words ("every", "file", "line") are left out.
pub(crate) fn search_words(task: &str, limit: usize) -> Vec<String> {
    let mut marked = Vec::new();
    let mut other = Vec::new();
    for token in task.split_whitespace() {
        let quoted = token.starts_with(['`', '"', '\'']);
        let word = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        let shaped = word.len() >= 3
            && word.starts_with(|c: char| c.is_ascii_alphabetic())
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !shaped || PLAIN_WORDS.contains(&word.to_lowercase().as_str()) {
            continue;
        }
        if marked
            .iter()
            .chain(other.iter())
            .any(|w: &String| w == word)
        {
            continue;
        }
        let capitals_inside = word.chars().skip(1).any(|c| c.is_ascii_uppercase());
        if quoted || capitals_inside {
            marked.push(word.to_string());
        } else {
            other.push(word.to_string());
        }
    }
    marked.into_iter().chain(other).take(limit).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_is_read_without_the_facts_before_it() {
        let task = "Write the word alpha into NOTES.md.";
        let facts = vec!["Makefile: a Makefile; likely commands: make".to_string()];
        let history = vec![
            Message::system("rules"),
            Message::user(crate::prompt::opening_request(&facts, task)),
            Message::user("a later message"),
        ];
        assert_eq!(task_of(&history), task);
        assert_eq!(task_of(&[Message::system("rules")]), "");
    }

    #[test]
    fn marked_words_come_first_and_paths_and_plain_words_are_left_out() {
        let words = search_words(
            "Find every TODO comment in the files of this workspace and write them all into a new file TODO.md, one per line, as path:line: text.",
            6,
        );
        assert_eq!(words, vec!["TODO".to_string()]);
        let words = search_words(
            "Read config/app.toml and write the `timeout` of the retry section into out.txt",
            6,
        );
        assert_eq!(
            words,
            vec!["timeout".to_string(), "retry".into(), "section".into()]
        );
        assert_eq!(
            search_words("Write the FIXME notes and their owners", 1),
            vec!["FIXME"]
        );
    }
}
