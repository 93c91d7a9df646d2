//! Answers that state a value no tool showed: after a tool ran, an answer whose
//! identifier (`ORD-10000`) or quoted number (`` `100` ``) appears in neither the
//! request nor any result is most often made up (a small model answering "the value
//! is `100`" for a file it never opened). The `full` profile holds such an answer once.

use std::path::Path;

use regex::Regex;
use rein_protocol::{Message, Role};

use crate::grounding::names_existing_path;
use crate::guesses::is_identifier;

/// The first value `answer` states that nothing in `history` (the user's messages and
/// the tool results) nor `seen` (every result of the run as it came, before the context
/// was compacted) shows, and that is no path under `root`.
pub(crate) fn unsupported_value(
    answer: &str,
    history: &[Message],
    seen: &[String],
    root: &Path,
) -> Option<String> {
    let candidates = stated_values(answer);
    if candidates.is_empty() {
        return None;
    }
    let shown: Vec<String> = history
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Tool))
        .filter_map(|m| m.content.as_deref())
        .chain(seen.iter().map(String::as_str))
        .map(str::to_lowercase)
        .collect();
    candidates.into_iter().find(|value| {
        let lower = value.to_lowercase();
        if looks_like_path(value) {
            // A path is backed by the file itself, not by a longer path that contains
            // it (`config/service.env` inside `.config/service.env`).
            return !names_existing_path(value, root)
                && !shown.iter().any(|text| names_whole(text, &lower));
        }
        !shown.iter().any(|text| text.contains(&lower)) && !names_existing_path(value, root)
    })
}

/// Whether `answer` states a value (a number, an id, a version: a word with a digit)
/// that `result` shows and `request` does not: an answer taken from that result
/// (`480` for `max_connections = 480`), not a guess.
pub(crate) fn quotes_result(answer: &str, result: &str, request: &str) -> bool {
    let word = |c: char| !(c.is_alphanumeric() || "-_.".contains(c));
    let in_text = |text: &str, value: &str| {
        text.split(word)
            .map(|t| t.trim_matches(['.', '-', '_']))
            .any(|t| t == value)
    };
    answer
        .split(word)
        .map(|token| token.trim_matches(['.', '-', '_']))
        .filter(|token| token.chars().any(|c| c.is_ascii_digit()))
        .any(|token| in_text(result, token) && !in_text(request, token))
}

/// Whether `value` is written like a relative path with a directory (`a/b.txt`).
fn looks_like_path(value: &str) -> bool {
    value.contains('/')
        && !value.contains(char::is_whitespace)
        && !value.contains("://")
        && value
            .rsplit_once('.')
            .is_some_and(|(_, ext)| (1..=8).contains(&ext.len()))
}

/// Whether `text` holds `path` as a whole path, not as the end of a longer one.
fn names_whole(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || "._/-".contains(c))
    })
}

/// The values `answer` states: spans in backticks that hold a digit or are written
/// like a path, whole identifiers (letters and digits, as `PG-4471`) and numbers of
/// six digits or more.
fn stated_values(answer: &str) -> Vec<String> {
    static QUOTED: std::sync::LazyLock<Option<Regex>> =
        std::sync::LazyLock::new(|| Regex::new(r"`([^`\n]{1,80})`").ok());
    let mut values: Vec<String> = Vec::new();
    if let Some(quoted) = QUOTED.as_ref() {
        for caps in quoted.captures_iter(answer) {
            let inner = caps[1].trim();
            if inner.contains(char::is_whitespace) {
                // A phrase or a command in backticks (`grep -A 1 "user=Farah"`,
                // `max_connections = 480`) is no one value: its words with a digit are.
                for word in inner
                    .split_whitespace()
                    .map(|w| w.trim_matches(|c: char| "\"'(),;:".contains(c)))
                    .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
                {
                    if !values.iter().any(|v| v == word) {
                        values.push(word.to_string());
                    }
                }
            } else if inner.chars().any(|c| c.is_ascii_digit()) || looks_like_path(inner) {
                values.push(inner.to_string());
            }
        }
    }
    // Paths and versions (`notes2.txt`, `v1.2`) are words with dots or slashes, not
    // identifiers.
    for token in answer.split(|c: char| !(c.is_ascii_alphanumeric() || "-_./".contains(c))) {
        let token = token.trim_matches(['-', '_', '.', '/']);
        if token.contains(['.', '/']) {
            continue;
        }
        // Six digits or more: a code or a number, not a count or a year.
        let long_number = token.len() >= 6 && token.chars().all(|c| c.is_ascii_digit());
        if (is_identifier(token) || long_number) && !values.iter().any(|v| v == token) {
            values.push(token.to_string());
        }
    }
    values
}

/// The one longer path the tool results write that ends with the path `value`
/// (`.config/service.env` for `config/service.env`): the file an answer that dropped
/// a leading `.` or directory meant.
pub(crate) fn longer_path_named(value: &str, history: &[Message]) -> Option<String> {
    if !looks_like_path(value) {
        return None;
    }
    let in_path = |c: char| c.is_alphanumeric() || "._/-".contains(c);
    let mut found: Vec<String> = Vec::new();
    let results = history
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.as_deref());
    for text in results {
        for (at, _) in text.match_indices(value) {
            let after = text[at + value.len()..].chars().next();
            if after.is_some_and(|c| c.is_alphanumeric() || "_/-".contains(c)) {
                continue;
            }
            let start = text[..at]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| in_path(c))
                .last()
                .map_or(at, |(i, _)| i);
            let path = text[start..at + value.len()].trim_start_matches("./");
            if start < at && path != value && !found.iter().any(|p| p == path) {
                found.push(path.to_string());
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The note for an answer that states `value` without a result showing it; `meant`,
/// the longer path a result writes that ends with it.
pub(crate) fn unsupported_note(value: &str, meant: Option<&str>) -> String {
    if let Some(meant) = meant {
        return format!(
            "`{value}` is not a file in the workspace; a result names `{meant}`. If that is the file, give your whole answer again with `{meant}` written exactly so."
        );
    }
    if looks_like_path(value) {
        return format!(
            "`{value}` is not a file in the workspace, and no result names it. Give your whole answer again with the path exactly as a result writes it (a leading `.` or a directory included); if no result gives it, find the file first (search with mode \"files\")."
        );
    }
    format!(
        "`{value}` appears in no tool result and not in the request, so nothing backs it yet. If a result above gives the value, answer with that value exactly as it is written there; if not, make the call that finds it (for example, read the file that holds it)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_states_a_value_of_the_result_quotes_it() {
        let result = "   1| # Limits for production.\n   2| max_connections = 480\n";
        let request = "Read config.json, then the limits file, and tell me max_connections.";
        assert!(quotes_result(
            "The value of `max_connections` in the `limits.toml` file is `480`.",
            result,
            request
        ));
        assert!(!quotes_result("It is 17 degrees.", result, request));
        assert!(!quotes_result("The limits file is read.", result, request));
        // A number the request gave is no sign of the result.
        assert!(!quotes_result(
            "Port 8443.",
            "port 8443",
            "Is port 8443 open?"
        ));
    }

    #[test]
    fn a_path_missing_its_leading_dot_is_pointed_at_the_one_a_result_writes() {
        let mut history = history();
        history.push(Message::tool_result(
            "call_2",
            "search",
            "In hidden or ignored files: 1 matching line in 1 file:\n.config/service.env:2: API_TOKEN_TTL=5400",
        ));
        assert_eq!(
            longer_path_named("config/service.env", &history).as_deref(),
            Some(".config/service.env")
        );
        let note = unsupported_note("config/service.env", Some(".config/service.env"));
        assert!(
            note.contains("give your whole answer again with `.config/service.env`"),
            "{note}"
        );
        // `prod/limits.toml` ends the result's `conf/prod/limits.toml`.
        assert_eq!(
            longer_path_named("prod/limits.toml", &history).as_deref(),
            Some("conf/prod/limits.toml")
        );
        // Two longer paths: no guess; a path no result ends with: none; not a path: none.
        history.push(Message::tool_result(
            "call_3",
            "search",
            "a/config/service.env:1: x",
        ));
        assert_eq!(longer_path_named("config/service.env", &history), None);
        assert_eq!(longer_path_named("other/file.txt", &history), None);
        assert_eq!(longer_path_named("PG-4471", &history), None);
        // A longer name is no path that ends with it (`service.envs`).
        let names = vec![Message::tool_result(
            "c",
            "list_dir",
            "x/config/service.envs",
        )];
        assert_eq!(longer_path_named("config/service.env", &names), None);
    }

    fn history() -> Vec<Message> {
        vec![
            Message::system("rules"),
            Message::user("Read config.json and tell me max_connections."),
            Message::tool_result(
                "call_1",
                "read_file",
                "   8|  \"limits\": \"conf/prod/limits.toml\", \"code\": \"PG-4471\"",
            ),
        ]
    }

    #[test]
    fn a_value_no_result_shows_is_found() {
        let dir = tempfile::tempdir().unwrap();
        for (answer, value) in [
            (
                "The value of `max_connections` in `conf/prod/limits.toml` is `100`.",
                "100",
            ),
            ("The code is PG-0000.", "PG-0000"),
            ("The confirmation code is 1234567890.", "1234567890"),
            // A hidden directory's file, its dot dropped.
            ("The file `prod/limits.toml` sets it.", "prod/limits.toml"),
            // A number inside a phrase in backticks.
            ("It is set as `max_connections = 100`.", "100"),
        ] {
            assert_eq!(
                unsupported_value(answer, &history(), &[], dir.path()).as_deref(),
                Some(value),
                "{answer}"
            );
        }
    }

    #[test]
    fn a_value_of_a_result_the_context_no_longer_holds_whole_is_supported() {
        let dir = tempfile::tempdir().unwrap();
        let answer = "The first one is `evt-5RVJ7`, at 2026-03-09T08:44:08Z.";
        assert_eq!(
            unsupported_value(answer, &history(), &[], dir.path()).as_deref(),
            Some("evt-5RVJ7")
        );
        let seen = ["events.log:5: 2026-03-09T08:44:08Z evt-5RVJ7 user=Farah".to_string()];
        assert_eq!(
            unsupported_value(answer, &history(), &seen, dir.path()),
            None
        );
    }

    #[test]
    fn values_the_results_or_the_request_show_are_supported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes2.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/notes3.txt"), "x").unwrap();
        for answer in [
            "The code is PG-4471.",
            "The limits live in `conf/prod/limits.toml`.",
            "It is `max_connections`, as asked.",
            "I wrote it to `notes2.txt`.",
            "The file `sub/notes3.txt` holds it.",
            "There are 3 of them.",
            "Done.",
            // A command shown in backticks states none of its words as a value.
            "With `grep -A 1 \"code\" config.json` the code is `PG-4471`.",
        ] {
            assert_eq!(
                unsupported_value(answer, &history(), &[], dir.path()),
                None,
                "{answer}"
            );
        }
    }
}
