//! Answers that say nothing the task asks for: a bare claim that the task is done
//! ("The task is done.") to a task that asks to be told something, and the task's own
//! words given back ("The logs/ directory holds the deploy log. Find the version…").
//! The 0.5B model ended `traps` runs with both, and with the bare words "tool_call";
//! the 1.5B model once answered with a file's text as the read showed it.

use crate::not_an_answer::NotAnswer;
use crate::stored_answer::asks_to_be_told;

/// Claims of completion that carry no content, compared without letter case and
/// end punctuation.
const BARE_CLAIMS: [&str; 10] = [
    "done",
    "all done",
    "completed",
    "task complete",
    "task completed",
    "task done",
    "the task is done",
    "the task is complete",
    "the task has been completed",
    "i have completed the task",
];

/// Replies that only name a call ("tool_call"), compared like [`BARE_CLAIMS`] with
/// `_` and `<>` taken as spaces.
const CALL_WORDS: [&str; 3] = ["tool call", "function call", "call"];

/// The fewest words of the task in a row that make an answer a copy of it.
const ECHOED_WORDS: usize = 6;

/// Why `answer` gives nothing `task` asks for, if it does not.
pub(crate) fn empty_answer(answer: &str, task: &str) -> Option<NotAnswer> {
    let claim = answer
        .trim()
        .trim_end_matches(['.', '!'])
        .trim()
        .to_lowercase();
    if BARE_CLAIMS.contains(&claim.as_str()) && wants_a_reply(task) {
        return Some(NotAnswer::ClaimsDone);
    }
    let named = claim.replace(['_', '<', '>', '/'], " ");
    if CALL_WORDS.contains(
        &named
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
    ) {
        return Some(NotAnswer::NamesACall);
    }
    let said = words(answer);
    let asked = words(task);
    let copied = said.len() >= ECHOED_WORDS
        && asked
            .windows(said.len())
            .any(|window| window == said.as_slice());
    if copied {
        return Some(NotAnswer::EchoesTask);
    }
    (copies_a_read(answer) && wants_a_reply(task) && !asks_for_text(task))
        .then_some(NotAnswer::CopiesRead)
}

/// The first placeholder of `answer` where a value goes (`<confirm_code>`): a
/// lowercase word with `_` inside, in angle brackets, outside backticks, not after a
/// `/` (`/users/<user_id>`), not an element (`<foo_bar>…</foo_bar>`), and written by
/// neither the task nor any of `results`. The 1.5B model answered "the confirmation
/// code is <confirm_code>" without the booking that gives it.
pub(crate) fn placeholder(answer: &str, task: &str, results: &[&str]) -> Option<String> {
    let outside_code: String = answer.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    outside_code.match_indices('<').find_map(|(at, _)| {
        let rest = &outside_code[at + 1..];
        let inner = &rest[..rest.find('>')?];
        let word = (3..=30).contains(&inner.len())
            && inner.contains('_')
            && inner.starts_with(|c: char| c.is_ascii_lowercase())
            && inner
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !inner.starts_with("tool")
            && !inner.starts_with("function");
        let slot = format!("<{inner}>");
        let after_slash = outside_code[..at].ends_with('/');
        let element = outside_code.contains(&format!("</{inner}>"));
        let quoted = task.contains(&slot) || results.iter().any(|r| r.contains(&slot));
        (word && !after_slash && !element && !quoted).then_some(slot)
    })
}

/// The fewest lines with `read_file`'s `N| ` margin that make an answer a copy of a
/// read.
const COPIED_LINES: usize = 3;

/// Whether `answer` is a file's text as `read_file` showed it: at least
/// [`COPIED_LINES`] lines, nearly all of them opening with a line number and `|` (the
/// 1.5B model answered "tell me the value of max_connections" with config.json so).
fn copies_a_read(answer: &str) -> bool {
    let lines: Vec<&str> = answer.lines().filter(|l| !l.trim().is_empty()).collect();
    let numbered = lines
        .iter()
        .filter(|line| {
            line.trim_start()
                .split_once('|')
                .is_some_and(|(number, _)| {
                    !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
                })
        })
        .count();
    numbered >= COPIED_LINES && numbered * 5 >= lines.len() * 4
}

/// Whether `task` asks for text itself: to show, print or quote lines or contents.
fn asks_for_text(task: &str) -> bool {
    let lower = task.to_lowercase();
    [
        "show", "print", "display", "content", "lines", "quote", "copy", "cat ",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// Whether `task` wants something told back: a question, "tell me", "answer with".
fn wants_a_reply(task: &str) -> bool {
    asks_to_be_told(task) || task.to_lowercase().contains("answer with")
}

/// The words of `text`, lowercased, punctuation dropped.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTION: &str = "How many bytes is firmware.bin? Answer with the number.";
    const PIPE: &str = "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.";

    #[test]
    fn a_bare_claim_of_completion_answers_no_question() {
        assert_eq!(
            empty_answer("The task is done.", QUESTION),
            Some(NotAnswer::ClaimsDone)
        );
        assert_eq!(empty_answer(" done! ", PIPE), Some(NotAnswer::ClaimsDone));
        // With the value, it is an answer; and a task that asks for a change only
        // may well be done.
        assert_eq!(
            empty_answer("The task is done: 4096 bytes.", QUESTION),
            None
        );
        assert_eq!(
            empty_answer(
                "The task is done.",
                "Rename the function parse to parse_line."
            ),
            None
        );
    }

    #[test]
    fn the_words_tool_call_are_no_answer() {
        for reply in ["tool_call", "Tool call.", "<tool_call>", "function call"] {
            assert_eq!(
                empty_answer(reply, QUESTION),
                Some(NotAnswer::NamesACall),
                "{reply}"
            );
        }
        assert_eq!(empty_answer("The tool call returned 17.", QUESTION), None);
    }

    #[test]
    fn the_task_given_back_is_no_answer() {
        assert_eq!(
            empty_answer(
                "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.",
                PIPE
            ),
            Some(NotAnswer::EchoesTask)
        );
        assert_eq!(
            empty_answer("find the version that was deployed", PIPE),
            Some(NotAnswer::EchoesTask)
        );
        // Its words around a value are an answer; so is a short phrase of it.
        assert_eq!(
            empty_answer("The version that was deployed is 2.7.1.", PIPE),
            None
        );
        assert_eq!(empty_answer("The deploy log.", PIPE), None);
    }

    #[test]
    fn a_file_copied_as_the_read_showed_it_is_no_value() {
        let task = "Read config.json, then read that limits file, and tell me the value of max_connections in it.";
        let copy = "1| {\n   2|   \"app\": {\n   3|     \"limits\": \"conf/prod/limits.toml\"\n   4|   }\n   5| }";
        assert_eq!(empty_answer(copy, task), Some(NotAnswer::CopiesRead));
        // Asked to show the file, its lines are the answer.
        assert_eq!(
            empty_answer(copy, "Show me the first lines of config.json."),
            None
        );
        // A value, or one numbered line, is an answer.
        assert_eq!(empty_answer("max_connections is 250.", task), None);
        assert_eq!(empty_answer("8| max_connections = 250", task), None);
    }

    #[test]
    fn a_placeholder_where_a_value_goes_is_no_answer() {
        let task = "Book the cheapest flight and tell me the confirmation code.";
        assert_eq!(
            placeholder(
                "The flight is WN-2240, and the code is <confirm_code>.",
                task,
                &[]
            ),
            Some("<confirm_code>".into())
        );
        // Tags, routes, code, comparisons and slots a result or the task writes are not.
        for answer in [
            "Wrap it in <tool_call> tags.",
            "The <version> of junit in pom.xml is 4.13.2.",
            "`DELETE /users/<user_id>` deletes a user.",
            "DELETE /users/<user_id> deletes a user.",
            "Run `pytest -k <test_name>`.",
            "It holds <max_conn>250</max_conn>.",
            "3 < 4 and 5 > 2",
        ] {
            assert_eq!(placeholder(answer, task, &[]), None, "{answer}");
        }
        let answer = "notes.txt follows `Release <version>`; the key is <api_key>.";
        assert_eq!(placeholder(answer, task, &["API key: <api_key>"]), None);
        assert_eq!(placeholder(answer, "Set <api_key> in .env.", &[]), None);
    }
}
